"""accuracy_vs_recall: zero-shot top-1 against retrieval R@1 across models (known answers)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from vlstress.errors import VlstressError
from vlstress.record import Record, write_record
from vlstress.report import records
from vlstress.suites.accuracy_vs_recall import correlation

from conftest import run_cli
from report_fixtures import record_flags

TOP1 = {"m1": 10.0, "m2": 20.0, "m3": 30.0, "m4": 40.0}  # zero-shot top-1 on `objects`, per model


def record(model: str, task: str, dataset: str, condition: dict, metrics: dict) -> Record:
    info = {
        "arch": "ViT-B-32",
        "pretrained": None,
        "weights": "random-init",
        "seed": int(model[1:]),
    }
    info |= {
        "weights_label": f"random-init (seed {model[1:]})",
        "slug": model,
        "n_params": 100 + int(model[1:]),
    }
    return Record(
        task=task,
        model={"slug": model, "arch": "ViT-B-32", "weights": info["weights_label"]},
        dataset={"name": dataset, "n_images": 14, "n_captions": 70},
        condition=condition,
        metrics=metrics,
        provenance={"step": "evaluate", "model": info, "params": {}, "seed": 0},
    )


def write_run(root, models=tuple(TOP1)) -> list:
    """Per model: zero-shot top-1, retrieval R@1 on exact lines of it, a text set with two seeds."""
    recs = []
    for model in models:
        top1 = TOP1[model]
        recs.append(record(model, "zeroshot", "objects", {"set": "objects"}, {"top1": top1}))
        recs.append(record(model, "zeroshot", "scenes", {"set": "scenes"}, {"top1": 50.0}))
        retrieval = {"i2t_R@1": 2 * top1 + 1, "t2i_R@1": 80 - top1}
        recs.append(record(model, "retrieval", "demo", {}, retrieval))
        for seed, shift in ((1, -1.0), (2, 1.0)):  # the mean over the two seeds is 0.5 * top1
            metrics = {"i2t_R@1": 0.5 * top1 + shift}
            recs.append(
                record(model, "text-stress", "demo", {"set": "danger", "seed": seed}, metrics)
            )
    paths = []
    for rec in recs:
        name = f"{rec.task}-{rec.dataset['name']}-{rec.condition.get('seed', 0)}.json"
        path = root / rec.model["slug"] / name
        write_record(path, rec)
        paths.append(path)
    return paths


def summary_of(tmp_path, models=tuple(TOP1)):
    paths = write_run(tmp_path / "metrics", models)
    out = tmp_path / "summary"
    outputs = [f"--out-{n}" for n in ("csv", "agg", "md", "scores", "plot")]
    files = [str(out / name) for name in ("s.csv", "a.csv", "s.md", "scores", "p.csv")]
    run_cli("summarize", *record_flags(paths), *(a for pair in zip(outputs, files) for a in pair))
    return out / "s.csv"


def test_a_line_through_exact_points_and_correlations_of_one():
    slope, intercept, r, p, rho, p_rho = correlation.fit(
        np.array([10.0, 20, 30, 40]), np.array([21.0, 41, 61, 81])
    )
    assert (slope, intercept) == pytest.approx((2.0, 1.0))
    assert r == pytest.approx(1.0) and rho == pytest.approx(1.0) and p < 1e-6


def test_known_answer_by_hand_and_agreement_with_scipy():
    """x = 1..5, y = 2, 1, 4, 3, 5: Sxy = 8, Sxx = Syy = 10, so r = slope = 0.8, intercept = 0.6; no
    ties, so Spearman's rho equals Pearson's r of the same values."""
    x, y = np.array([1.0, 2, 3, 4, 5]), np.array([2.0, 1, 4, 3, 5])
    slope, intercept, r, p, rho, p_rho = correlation.fit(x, y)
    assert (slope, intercept, r, rho) == pytest.approx((0.8, 0.6, 0.8, 0.8))
    assert p == pytest.approx(stats.pearsonr(x, y).pvalue) and p_rho == pytest.approx(
        stats.spearmanr(x, y).pvalue
    )


@pytest.mark.parametrize(
    "x, y",
    [
        ([1.0, 2.0], [3.0, 4.0]),
        ([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]),
        ([1.0, 2.0, 3.0], [5.0, 5.0, 5.0]),
    ],
)
def test_undefined_with_fewer_than_three_models_or_no_spread(x, y):
    assert all(math.isnan(v) for v in correlation.fit(np.array(x), np.array(y)))


def test_fits_per_condition_from_the_summary(tmp_path):
    agg = records.aggregate(records.read_summary(summary_of(tmp_path)))
    pairs = correlation.paired(agg, "objects")
    found, notes = correlation.fits(pairs, 0.01)
    assert notes == []
    by = {(f.direction, f.condition): f for f in found}
    assert set(by) == {("i2t", "original"), ("t2i", "original"), ("i2t", "danger")}
    assert (by["i2t", "original"].slope, by["i2t", "original"].intercept) == pytest.approx(
        (2.0, 1.0)
    )
    assert (by["t2i", "original"].slope, by["t2i", "original"].pearson_r) == pytest.approx(
        (-1.0, -1.0)
    )
    danger = by["i2t", "danger"]  # the mean over the two seeds: 0.5 * top1
    assert (danger.slope, danger.intercept, danger.n_models) == pytest.approx((0.5, 0.0, 4))
    assert danger.spearman_rho == pytest.approx(1.0)


def test_the_command_writes_table_metrics_and_figure(tmp_path):
    # two models: every fit is undefined, and says so
    summary = summary_of(tmp_path, models=("m1", "m2"))
    out = tmp_path / "out"
    flags = [
        "--out-md",
        out / "t.md",
        "--out-tex",
        out / "t.tex",
        "--out-json",
        out / "m.json",
        "--out-scores",
        out / "scores",
        "--out-fig",
        out / "f.png",
    ]
    result = run_cli(
        "accuracy-vs-recall", "--summary", str(summary), "--testset", "objects", *map(str, flags)
    )
    assert "undefined (2 model(s), at least 3 needed): image → text original" in result.stderr
    metrics = json.loads((out / "m.json").read_text())
    assert metrics["testset"] == "objects" and len(metrics["fits"]) == 3
    # JSON null, never NaN
    assert all(fit["slope"] is None and fit["n_models"] == 2 for fit in metrics["fits"])
    # DVC metrics: one flat file per fit, ASCII names, the same numbers
    files = sorted(p.relative_to(out / "scores").as_posix() for p in (out / "scores").rglob("*"))
    files = [f for f in files if f.endswith(".json")]
    assert len(files) == 3 and all(f.isascii() and " " not in f for f in files), files
    first = json.loads((out / "scores" / files[0]).read_text())
    assert first["n_models"] == 2 and first["slope"] is None and "condition" not in first
    markdown = (out / "t.md").read_text()
    assert (
        "Pearson r" in markdown
        and "undefined (2 model(s), at least 3 needed)" in markdown
        and "<!-- provenance" in markdown
    )
    assert (out / "t.tex").read_text().startswith("% generated by `vlstress tables`")
    assert (out / "f.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and (out / "f.pdf").is_file()


def test_an_unknown_test_set_is_named(tmp_path):
    agg = records.aggregate(records.read_summary(summary_of(tmp_path)))
    with pytest.raises(
        VlstressError, match="no zero-shot top-1 of test set 'objcts'.*known: objects, scenes"
    ):
        correlation.paired(agg, "objcts")


def test_the_params_check_knows_the_block(repo_root):
    import copy

    import yaml

    from vlstress import params_check

    params = yaml.safe_load((repo_root / "params.yaml").read_text())
    params["suites"]["accuracy_vs_recall"] = True
    params["accuracy_vs_recall"] = {"testset": "objects"}
    assert params_check.problems(params) == []
    bad = copy.deepcopy(params)
    bad["accuracy_vs_recall"]["testset"] = "objcts"
    assert any(
        "accuracy_vs_recall.testset: unknown test set 'objcts'" in p
        for p in params_check.problems(bad)
    )
    del bad["accuracy_vs_recall"]
    assert any(
        "suites.accuracy_vs_recall is on but params lack accuracy_vs_recall" in p
        for p in params_check.problems(bad)
    )


# ------------------------------------------------------------------ the figure's line and band


def test_points_on_a_logit_line_give_that_line_and_a_band_of_no_width():
    """logit(R@1) = 2 logit(top-1) + 0.5 exactly: every resample refits the same line."""
    from scipy.special import expit, logit

    from vlstress.suites.accuracy_vs_recall import band

    top1 = np.array([10.0, 20.0, 35.0, 50.0, 70.0])
    recall = 100 * expit(2 * logit(top1 / 100) + 0.5)
    drawn, why = band.curve(top1, recall, epsilon=1e-4, n_resamples=200)
    assert why is None
    assert drawn.x[0] == pytest.approx(10.0) and drawn.x[-1] == pytest.approx(70.0)
    assert drawn.y == pytest.approx(100 * expit(2 * logit(drawn.x / 100) + 0.5))
    assert drawn.low == pytest.approx(drawn.y) and drawn.high == pytest.approx(drawn.y)


def test_the_band_is_the_zero_shot_suites_bootstrap_in_logit_space():
    """Seeded, pointwise percentiles of refits over resampled models: the same band as
    robustness.bootstrap_band of the same models (fractions), drawn back in percent, around the
    line."""
    from scipy.special import expit

    from vlstress.suites.accuracy_vs_recall import band
    from vlstress.suites.zeroshot import robustness

    top1 = np.array([12.0, 20.0, 31.0, 44.0, 58.0, 71.0])
    recall = np.array([5.0, 11.0, 9.0, 22.0, 30.0, 26.0])
    drawn, why = band.curve(top1, recall, epsilon=1e-4, n_resamples=300, seed=3)
    assert why is None
    grid = np.linspace(*robustness.get_transform("logit").to_axis([0.12, 0.71]), band.GRID_POINTS)
    reference = robustness.bootstrap_band(
        top1 / 100, recall / 100, grid, "logit", "ols", 1e-4, 300, 3, 0.95
    )
    assert drawn.low == pytest.approx(100 * expit(reference.low))
    assert drawn.high == pytest.approx(100 * expit(reference.high))
    assert np.all(drawn.low <= drawn.y + 1e-9) and np.all(drawn.y <= drawn.high + 1e-9)
    assert np.all(drawn.high - drawn.low > 0.5)  # scattered points: a band of some width
    again, _ = band.curve(top1, recall, epsilon=1e-4, n_resamples=300, seed=3)
    assert again.low == pytest.approx(drawn.low)  # seeded


def test_half_an_item_of_the_coarsest_count_clips_0_and_100(tmp_path):
    """The demo: top-1 over 30 images, image → text over 14 images, text → image over 70
    captions: 0 and 100% are clipped to 0.5 / 14."""
    from vlstress.suites.accuracy_vs_recall import band, report

    table = records.read_summary(summary_of(tmp_path))
    assert band.half_item(table, "objects") == pytest.approx(0.5 / 14)
    assert report.count_note(table, "objects") == (
        "top-1 over 14 images (objects); R@1 over 14 images (image → text), 70 captions "
        "(text → image)"
    )


def test_the_figure_draws_one_band_per_defined_fit_and_says_why_where_none(tmp_path):
    import pandas as pd

    from vlstress.report.figures import setup
    from vlstress.suites.accuracy_vs_recall import report

    rows = []
    for model, top1, r1 in (("a", 10.0, 4.0), ("b", 10.0, 6.0), ("c", 20.0, 9.0)):
        rows.append((model, "i2t", "retrieval", "original", top1, r1))
    for model, top1, r1 in zip("abcde", (10.0, 20, 30, 40, 50), (4.0, 9, 11, 20, 19)):
        rows.append((model, "t2i", "retrieval", "original", top1, r1))
    pairs = pd.DataFrame(
        rows, columns=["model", "direction", "task", "condition", "accuracy", "recall"]
    )
    found, _ = correlation.fits(pairs, 0.01)
    setup()
    fig = report.figure(pairs, found, "objects", [], epsilon=0.01, n_resamples=200)
    i2t, t2i = fig.axes[:2]
    assert [c.get_gid() for c in t2i.collections].count("band") == 1
    assert [line.get_gid() for line in t2i.lines].count("line") == 1
    # three models at two top-1 values: a line, but a third of the resamples have none
    assert [c.get_gid() for c in i2t.collections].count("band") == 0
    assert [line.get_gid() for line in i2t.lines].count("line") == 1
    notes = "\n".join(t.get_text() for t in fig.texts).replace("\n", " ")
    assert "bands: 95% percentile bootstrap over the models (200 resamples, seed 0" in notes
    assert "no band: image → text original:" in notes


def test_the_tables_logit_line_is_the_one_the_figure_draws():
    """Points on logit(R@1) = 2 logit(top-1) + 0.5 give that line exactly; the table's logit line
    is the figure's (`band.curve`, the same least squares), while its plain line is another."""
    from scipy.special import expit, logit

    from vlstress.suites.accuracy_vs_recall import band

    top1 = np.array([10.0, 20, 35, 50, 70])
    recall = 100 * expit(2 * logit(top1 / 100) + 0.5)
    slope, intercept = correlation.logit_fit(top1, recall, 0.01)
    assert (slope, intercept) == pytest.approx((2.0, 0.5))
    drawn, _ = band.curve(top1, recall, 0.01, n_resamples=200)
    ends = logit(drawn.y[[0, -1]] / 100), logit(drawn.x[[0, -1]] / 100)
    assert (ends[0][1] - ends[0][0]) / (ends[1][1] - ends[1][0]) == pytest.approx(slope)
    plain = correlation.fit(top1, recall)
    assert not plain[0] == pytest.approx(slope)
    # too few models or no spread: undefined, as the plain line
    assert all(np.isnan(v) for v in correlation.logit_fit(top1[:2], recall[:2], 0.01))
