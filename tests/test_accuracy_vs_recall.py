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
    found, notes = correlation.fits(pairs)
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
