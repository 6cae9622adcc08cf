"""Effective robustness of the workflow against imagenet-testbed's line (`vlstress robustness`,
vlstress.suites.zeroshot.robustness_lines): the line of the shipped 85 ImageNet-trained models where
a shift has a testbed column, its bootstrap band, the run's own line elsewhere, and every row naming
its line. Synthetic accuracies only; fast."""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import special

from vlstress.suites.zeroshot import robustness, robustness_lines, robustness_summary
from vlstress.suites.zeroshot.baselines import published_path

REPO = Path(__file__).resolve().parents[1]
KINDS = {
    "imagenet": "imagenet",
    "imagenet_v2": "imagenet-v2",
    "imagenet_r": "imagenet-r",
    "sketch": "imagenet-sketch",
    "imagenet_a": "imagenet-a",
    "objectnet": "objectnet",
    "cifar": "cifar10",
    "objects": "demo-objects",
}
RESAMPLES = 200  # enough for a band; the workflow's default is 1000


def _shifts(models: dict[str, tuple[float, float]], shift: str) -> pd.DataFrame:
    """Long rows model, shift, id_accuracy, shifted_accuracy (fractions)."""
    return pd.DataFrame(
        [(m, shift, ident, shifted) for m, (ident, shifted) in models.items()],
        columns=["model", "shift", "id_accuracy", "shifted_accuracy"],
    )


def _testbed_column(column: str) -> tuple[np.ndarray, np.ndarray]:
    """The testbed's ImageNet and `column` accuracies (fractions), read with the csv module: rows
    with both, neither at 0 or 100%."""
    with open(published_path("testbed"), newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["imagenet1k"] and r[column]]
    x = np.array([float(r["imagenet1k"]) for r in rows]) / 100
    y = np.array([float(r[column]) for r in rows]) / 100
    inside = (x > 0) & (x < 1) & (y > 0) & (y < 1)
    return x[inside], y[inside]


@pytest.mark.parametrize(
    "shift,column,n",
    [
        ("imagenet_v2", "imagenetv2", 85),
        ("imagenet_r", "imagenet-r", 80),  # 5 models lack ImageNet-R
        ("sketch", "imagenet_sketch", 85),
        ("imagenet_a", "imagenet-a", 84),  # ResNet-50 at 0% (ImageNet-A was filtered against it)
        ("objectnet", "objectnet", 85),
    ],
)
def test_the_testbed_line_is_an_independent_fit_of_the_shipped_table(shift, column, n):
    """Known answer: numpy.polyfit on the logits of the shipped testbed values."""
    x, y = _testbed_column(column)
    slope, intercept = np.polyfit(special.logit(x), special.logit(y), 1)
    rows = _shifts({"clip": (0.7, 0.6), "other": (0.6, 0.4)}, shift)
    found, lines, notes = robustness_lines.place(
        rows, KINDS, "imagenet", robustness_lines.read_reference("testbed"), n_resamples=0
    )
    line = lines[shift].line
    assert line.n == len(x) == n and not notes
    assert line.slope == pytest.approx(slope, rel=1e-9)
    assert line.intercept == pytest.approx(intercept, rel=1e-9, abs=1e-12)
    assert lines[shift].text.startswith(f"testbed: {n} ImageNet-trained models")
    # the prediction of the line, by hand
    expected = special.expit(slope * special.logit(0.7) + intercept)
    assert found.loc[found["model"] == "clip", "predicted"].item() == pytest.approx(expected)
    assert not found["baseline"].any()  # the run's models are placed, not fitted


def test_a_model_on_the_testbed_line_has_er_zero_inside_its_interval():
    x, y = _testbed_column("imagenet-r")
    slope, intercept = np.polyfit(special.logit(x), special.logit(y), 1)
    on = float(special.expit(slope * special.logit(0.72) + intercept))
    rows = _shifts({"on": (0.72, on), "above": (0.72, on + 0.1)}, "imagenet_r")
    found, _, _ = robustness_lines.place(
        rows,
        KINDS,
        "imagenet",
        robustness_lines.read_reference("testbed"),
        n_resamples=RESAMPLES,
        seed=0,
    )
    found = found.set_index("model")
    assert found.loc["on", "effective_robustness"] == pytest.approx(0.0, abs=1e-9)
    assert found.loc["above", "effective_robustness_pp"] == pytest.approx(10.0, abs=1e-6)
    low, high = found.loc["on", ["effective_robustness_low_pp", "effective_robustness_high_pp"]]
    assert low < 0.0 < high  # the line itself is inside its own band
    assert found.loc["on", "relative_robustness"] == pytest.approx(on - 0.72)


def _synthetic_baselines(n: int, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """n baselines around logit(y) = 1.2 logit(x) − 0.8, scatter 0.15 on the logit axis."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.5, 0.85, n)
    y = special.expit(1.2 * special.logit(x) - 0.8 + rng.normal(0, 0.15, n))
    return x, y


def test_the_band_contains_the_line_and_narrows_with_more_baselines():
    grid = np.linspace(-0.5, 2.5, 31)
    widths = {}
    for n in (20, 400):
        x, y = _synthetic_baselines(n)
        line = robustness.fit_line(x, y)
        band = robustness.bootstrap_band(x, y, grid, n_resamples=RESAMPLES, seed=0)
        fitted = line.slope * grid + line.intercept
        assert np.all(band.low <= fitted) and np.all(fitted <= band.high)
        assert np.all(band.high - band.low > 0)
        widths[n] = float(np.mean(band.high - band.low))
    # 20x the baselines: about sqrt(20) ≈ 4.5x narrower; at least 2.5x
    assert widths[400] < widths[20] / 2.5


def test_the_seeded_bootstrap_is_reproducible():
    x, y = _synthetic_baselines(30)
    grid = np.linspace(0.0, 2.0, 11)
    first = robustness.bootstrap_band(x, y, grid, n_resamples=RESAMPLES, seed=7)
    again = robustness.bootstrap_band(x, y, grid, n_resamples=RESAMPLES, seed=7)
    other = robustness.bootstrap_band(x, y, grid, n_resamples=RESAMPLES, seed=8)
    assert np.array_equal(first.low, again.low) and np.array_equal(first.high, again.high)
    assert not np.array_equal(first.low, other.low)
    assert (first.n_resamples, first.seed, first.confidence) == (RESAMPLES, 7, 0.95)


def test_too_few_baselines_for_a_band_is_an_error_naming_them():
    from vlstress.errors import VlstressError

    with pytest.raises(VlstressError, match="at least 3 baseline models, got 2"):
        robustness.bootstrap_band([0.5, 0.6], [0.4, 0.5], [0.0], n_resamples=10)


MODELS = {"m1": (0.60, 0.40), "m2": (0.70, 0.52), "m3": (0.80, 0.58)}


@pytest.mark.parametrize(
    "in_distribution,shift,source,says",
    [
        ("imagenet", "imagenet_r", "testbed", "testbed: 80 ImageNet-trained models"),
        (
            "imagenet",
            "objectnet",
            "testbed",
            "testbed: 85 ImageNet-trained models",
        ),
        ("imagenet", "cifar", "run", "run's 3 models (no testbed line for cifar10)"),
        (
            "imagenet",
            "typographic attack",
            "run",
            "run's 3 models (no testbed line for typographic attack)",
        ),
        (
            "objects",  # the demo: its in-distribution set is not ImageNet
            "imagenet_r",
            "run",
            "run's 3 models (no testbed line for in-distribution kind demo-objects)",
        ),
    ],
)
def test_every_row_names_its_line(in_distribution, shift, source, says):
    found, lines, notes = robustness_lines.place(
        _shifts(MODELS, shift),
        KINDS,
        in_distribution,
        robustness_lines.read_reference("testbed"),
        n_resamples=0,
    )
    assert set(found["line_source"]) == {source} and set(found["line"]) == {says}
    assert lines[shift].source == source and lines[shift].text == says and not notes
    # the run's own models are the baselines of a run fit, never of the testbed's
    assert found["baseline"].all() == (source == "run")
    assert (lines[shift].cloud is None) == (source == "run")


def test_baselines_run_places_every_shift_against_the_run_and_says_so():
    found, lines, _ = robustness_lines.place(
        _shifts(MODELS, "imagenet_r"), KINDS, "imagenet", robustness_lines.read_reference("run")
    )
    assert set(found["line"]) == {
        "run's 3 models (baselines: run); no band: a bootstrap needs 10 models"
    }
    assert lines["imagenet_r"].band is None and found["effective_robustness_low_pp"].isna().all()


def test_a_run_line_over_enough_models_gets_its_band_and_er_intervals():
    """12 models: the run's own line gets the percentile bootstrap band over them, as a published
    line does over its baselines, and each model's ER interval holds its ER."""
    ident, shifted = _synthetic_baselines(12)
    models = {f"m{i:02d}": (float(x), float(y)) for i, (x, y) in enumerate(zip(ident, shifted))}
    found, lines, _ = robustness_lines.place(
        _shifts(models, "cifar"), KINDS, "imagenet", None, n_resamples=RESAMPLES
    )
    line = lines["cifar"]
    assert line.source == "run" and line.band is not None and "no band" not in line.text
    assert (line.band.low <= line.band.high).all()
    er = found["effective_robustness_pp"]
    assert (found["effective_robustness_low_pp"] <= er + 1e-9).all()
    assert (er <= found["effective_robustness_high_pp"] + 1e-9).all()
    assert (found["effective_robustness_high_pp"] > found["effective_robustness_low_pp"]).all()
    # no bootstrap asked for: no band, and no note of one
    _, lines, _ = robustness_lines.place(
        _shifts(models, "cifar"), KINDS, "imagenet", None, n_resamples=0
    )
    assert lines["cifar"].band is None and "no band" not in lines["cifar"].text


def test_one_model_is_placed_against_the_testbed_but_has_no_run_line():
    one = pd.concat([_shifts({"m1": MODELS["m1"]}, s) for s in ("imagenet_r", "cifar")])
    found, lines, notes = robustness_lines.place(
        one, KINDS, "imagenet", robustness_lines.read_reference("testbed"), n_resamples=0
    )
    found = found.set_index("shift")
    assert math.isfinite(found.loc["imagenet_r", "effective_robustness"])
    assert math.isnan(found.loc["cifar", "effective_robustness"]) and list(lines) == ["imagenet_r"]
    assert found.loc["cifar", "line"].startswith("none (no testbed line for cifar10")
    assert len(notes) == 1 and "shift cifar" in notes[0]


def _summary(models: dict[str, dict[str, float]]) -> pd.DataFrame:
    """The summary's zero-shot top-1 rows (percent), as `vlstress summarize` writes them."""
    rows = [
        {"model": m, "label": m, "arch": "ViT-B-32", "dataset": d, "task": "zeroshot"}
        | {"metric": "top1", "value": v, "condition_json": "{}"}
        for m, values in models.items()
        for d, v in values.items()
    ]
    return pd.DataFrame(rows)


def test_baselines_run_reproduces_the_line_over_the_run_models():
    """The option keeps the workflow's former answer: one line per shift over the run's models."""
    accuracies = {
        "a": {"imagenet": 60.0, "imagenet_r": 30.0, "sketch": 20.0},
        "b": {"imagenet": 70.0, "imagenet_r": 45.0, "sketch": 25.0},
        "c": {"imagenet": 76.0, "imagenet_r": 41.0, "sketch": 33.0},
    }
    corruptions = pd.DataFrame(columns=["model", "mCA"])
    table = _summary(accuracies)
    found, lines, note = robustness_summary.effective(
        table, "imagenet", corruptions, "logit", "ols", KINDS, "run"
    )
    shifts = robustness_summary.shift_table(table, "imagenet", corruptions)
    former = robustness.effective_robustness(
        shifts.assign(
            id_accuracy=shifts["id_accuracy"] / 100,
            shifted_accuracy=shifts["shifted_accuracy"] / 100,
        ),
        "all",
        "logit",
        "ols",
    )
    columns = list(robustness.OUTPUT_COLUMNS)
    pd.testing.assert_frame_equal(found[columns], former[columns], check_dtype=False)
    assert note is None and {s: e.line.n for s, e in lines.items()} == {
        "imagenet_r": 3,
        "sketch": 3,
    }
    # the default places the same models against the testbed instead
    placed, _, _ = robustness_summary.effective(
        table, "imagenet", corruptions, "logit", "ols", KINDS, "testbed", 0
    )
    assert set(placed["line_source"]) == {"testbed"}
    assert not np.allclose(placed["predicted"], found["predicted"])


def test_the_demo_tracked_er_is_reproduced_under_both_settings():
    """The demo's in-distribution set is not ImageNet: every shift is a run fit under `testbed`
    too, the numbers of its tracked effective.csv (written before the testbed line existed)."""
    summary_csv = REPO / "results/summary.csv"
    tracked = REPO / "results/robustness/effective.csv"
    if not (summary_csv.is_file() and tracked.is_file()):
        pytest.skip("the demo's results are not built")
    from vlstress.report import figures, records
    from vlstress.suites.zeroshot.corruption_error import corruption_table

    params = yaml.safe_load((REPO / "params.yaml").read_text())["zeroshot"]
    kinds = {name: entry["kind"] for name, entry in params["testsets"].items()}
    table = figures.mark_random_init(records.read_summary(summary_csv))
    top1, clean = robustness_summary.corruption_top1(table)
    corruptions = corruption_table(top1, clean, None)
    # the mean over corruptions follows the corruption suite's mCA, which may change on its own
    expected = pd.read_csv(tracked).query("shift != 'corruptions (mean)'")
    if expected.empty:
        pytest.skip("the demo's tracked effective robustness has no shift but the corruptions")
    for baselines in ("run", "testbed"):
        found, _, _ = robustness_summary.effective(
            table, params["in_distribution"], corruptions, "logit", "ols", kinds, baselines, 0
        )
        assert set(found["line_source"]) <= {"run", "none"}
        assert found["line"].str.contains("run's|none", regex=True).all()
        found = found[found["shift"] != "corruptions (mean)"]
        merged = found.merge(expected, on=["shift", "model"], suffixes=("", "_tracked"))
        assert len(merged) == len(expected)
        np.testing.assert_allclose(
            merged["effective_robustness"].astype(float),
            merged["effective_robustness_tracked"].astype(float),
            atol=2e-6,  # the CSV keeps 6 decimals
        )


def _write_summary(path: Path, accuracies: dict[str, dict[str, float]]) -> None:
    from vlstress.record import Record, write_record
    from vlstress.report import records

    from report_fixtures import record

    paths = []
    for model, values in accuracies.items():
        for dataset, value in values.items():
            rec = dataclasses.replace(
                record(model, "zeroshot", {}, {"top1": value}),
                dataset={"name": dataset, "n_images": 50, "n_classes": 200, "kind": KINDS[dataset]},
            )
            assert isinstance(rec, Record)
            paths.append(path.parent / f"{model}-{dataset}.json")
            write_record(paths[-1], rec)
    records.collect(paths).to_csv(path, index=False)


def test_the_command_writes_the_line_in_every_output(tmp_path, monkeypatch):
    """`vlstress robustness --params ...`: the CSV's `line` column, the Markdown and LaTeX
    tables, the JSON's lines, and the figure's cloud, band and panel titles."""
    import matplotlib

    from vlstress import cli
    from vlstress.suites.zeroshot import robustness_figure

    summary_csv = tmp_path / "summary.csv"
    _write_summary(
        summary_csv,
        {
            "rn50-openai": {"imagenet": 60.0, "imagenet_r": 40.0, "cifar": 70.0},
            "vit-b-32-random": {"imagenet": 72.0, "imagenet_r": 55.0, "cifar": 80.0},
        },
    )
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    template = next(iter(params["zeroshot"]["testsets"].values()))
    params["zeroshot"]["testsets"] = {
        name: {**template, "kind": KINDS[name]} for name in ("imagenet", "imagenet_r", "cifar")
    }
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    drawn = {}
    original = robustness_figure.draw

    def spy(*args, **kwargs):
        drawn["fig"] = original(*args, **kwargs)
        return drawn["fig"]

    monkeypatch.setattr(robustness_figure, "draw", spy)
    out = tmp_path / "out"
    flags = [
        "robustness", "--params", str(tmp_path / "params.yaml"), "--summary", str(summary_csv),
        "--in-distribution", "imagenet", "--bootstrap", "50", "--seed", "1",
        "--out-corruptions", str(out / "c.csv"), "--out-effective", str(out / "e.csv"),
        "--out-md", str(out / "r.md"), "--out-tex", str(out / "e.tex"),
        "--out-json", str(out / "r.json"), "--out-scores", str(out / "scores"),
        "--out-fig", str(out / "er.png"),
    ]  # fmt: skip
    assert cli.main(flags) == 0
    effective = pd.read_csv(out / "e.csv").set_index(["shift", "model"])
    assert effective.loc[("imagenet_r", "rn50-openai"), "line"] == (
        "testbed: 80 ImageNet-trained models"
    )
    assert effective.loc[("cifar", "rn50-openai"), "line"] == (
        "run's 2 models (no testbed line for cifar10); no band: a bootstrap needs 10 models"
    )
    assert effective.loc["imagenet_r", "effective_robustness_low_pp"].notna().all()
    assert effective.loc["cifar", "effective_robustness_low_pp"].isna().all()
    md = (out / "r.md").read_text()
    assert re.search(r"\| imagenet_r +\| testbed: 80 ImageNet-trained models +\| ", md)
    assert "(50 resamples)" in md and "run's 2 models (no testbed line for cifar10)" in md
    tex = (out / "e.tex").read_text()
    assert "\\begin{table*}" in tex and "testbed: 80 ImageNet-trained models" in tex
    body = json.loads((out / "r.json").read_text())
    assert body["lines"]["imagenet_r"]["source"] == "testbed"
    assert body["lines"]["imagenet_r"]["band"] == {"confidence": 0.95, "n_resamples": 50, "seed": 1}
    assert body["provenance"]["params"]["testset_kinds"]["imagenet_r"] == "imagenet-r"
    assert "ER imagenet_r low" in body["models"]["rn50-openai"]
    fig = drawn["fig"]
    assert isinstance(fig, matplotlib.figure.Figure)
    # titles wrap to fit the panel: compare them with line breaks read as spaces
    titles = {" ".join(ax.get_title().split()) for ax in fig.axes}
    assert "imagenet_r line: testbed: 80 ImageNet-trained models" in titles
    assert (
        "cifar line: run's 2 models (no testbed line for cifar10); no band: a bootstrap needs 10"
        " models" in titles
    )
    gids = {artist.get_gid() for ax in fig.axes for artist in ax.get_children()}
    assert {"cloud", "band", "fit", "identity"} <= gids
    legend = [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().texts]
    assert "published baselines (n = 80; per panel in its title)" in legend
    assert (out / "er.png").stat().st_size > 10_000 and (out / "er.pdf").is_file()


def test_a_csv_of_ones_own_baselines_replaces_the_testbed(tmp_path):
    x, y = _synthetic_baselines(12)
    path = tmp_path / "mine.csv"
    pd.DataFrame(
        {"model": [f"b{i}" for i in range(12)], "imagenet1k": 100 * x, "imagenet-r": 100 * y}
    ).to_csv(path, index=False)
    found, lines, _ = robustness_lines.place(
        _shifts(MODELS, "imagenet_r"),
        KINDS,
        "imagenet",
        robustness_lines.read_reference(str(path)),
        n_resamples=0,
    )
    assert set(found["line"]) == {"mine.csv: 12 models"}
    slope, intercept = np.polyfit(special.logit(x), special.logit(y), 1)
    assert lines["imagenet_r"].line.slope == pytest.approx(slope, rel=1e-9)
    # a shift the file has no column for falls to the run's line, and says why
    sketch, _, _ = robustness_lines.place(
        _shifts(MODELS, "sketch"),
        KINDS,
        "imagenet",
        robustness_lines.read_reference(str(path)),
        n_resamples=0,
    )
    assert set(sketch["line"]) == {
        "run's 3 models (no mine.csv line for imagenet-sketch: mine.csv has no imagenet_sketch "
        "accuracies)"
    }


def test_the_params_check_names_a_bad_baselines_value(tmp_path):
    from vlstress.suites.zeroshot.params import baselines_problems

    assert baselines_problems("testbed") == [] and baselines_problems("run") == []
    (problem,) = baselines_problems(str(tmp_path / "nowhere.csv"))
    assert problem.startswith("zeroshot.robustness.baselines:") and "file not found" in problem
    bad = tmp_path / "bad.csv"
    bad.write_text("model,top1\na,50\n")
    (problem,) = baselines_problems(str(bad))
    assert "needs columns model, imagenet1k and at least one of imagenetv2" in problem


def test_resamples_without_a_line_are_left_out_of_a_band_of_few_baselines():
    """Four baselines: 1 in 64 resamples holds one model only (no line) and is left out; three:
    1 in 9, too many for a band."""
    from vlstress.errors import VlstressError

    grid = np.linspace(-1.0, 1.0, 5)
    x, y = [0.5, 0.6, 0.7, 0.8], [0.35, 0.42, 0.55, 0.62]
    band = robustness.bootstrap_band(x, y, grid, n_resamples=400, seed=0)
    assert np.all(np.isfinite(band.low)) and np.all(band.low <= band.high)
    with pytest.raises(VlstressError, match="too few distinct baselines for a band"):
        robustness.bootstrap_band(x[:3], y[:3], grid, n_resamples=400, seed=0)
