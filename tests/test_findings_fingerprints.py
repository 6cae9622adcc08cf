"""Robustness fingerprints (`vlstress fingerprints`, vlstress.suites.findings.fingerprints): a
synthetic pool of 40 models with planted group effects must give exactly those findings; the line,
the residuals, the offsets and Holm's correction against hand computations; too-small marking; the
command end to end with its tables and figures. Synthetic numbers only; fast."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd
import pytest
from scipy import special, stats

from vlstress.report.headlines import COLUMNS
from vlstress.report.records import RECORD_COLUMNS
from vlstress.suites.findings import fingerprint_figures, fingerprint_report
from vlstress.suites.findings.fingerprints import (
    PERCENTILE,
    Settings,
    fingerprints,
    group_offset,
    holm,
    model_groups,
    size_groups,
)

FAMILIES = ("ViT", "ResNet", "ConvNeXt", "EVA")
DATA = ("LAION-2B", "LAION-400M", "WIT-400M", "DataComp-1B")
LOSSES = ("siglip", "clip", "coca", "supervised")
STYLIZED = ("stylized", "objects-stylized", "shift=stylized", "top1")
TYPOGRAPHIC = ("typographic", "objects-t", "attack=typographic", "top1")
ECE = ("calibration", "objects", "set=objects,split=held-out", "ece")
PLANTED = {("pretrain_data", "LAION-2B", "stylized"), ("loss", "siglip", "typographic")}
ATTRIBUTES = ("family", "pretrain_data", "loss", "size")


def _pool(n: int = 40, seed: int = 7) -> list[dict]:
    """Rows (model, series, value, attributes) of n models: x uniform in 40-80%; LAION-2B +6
    points on stylized top-1 over its line, siglip -5 on typographic top-1, nothing else (families
    and sizes have no effect); noise sd 1.5 points. Attributes are crossed at random, 10 a group."""
    rng = np.random.default_rng(seed)
    order = np.arange(n)
    cells = {
        "family": np.array(FAMILIES)[rng.permutation(order) % 4],
        "pretrain_data": np.array(DATA)[rng.permutation(order) % 4],
        "loss": np.array(LOSSES)[rng.permutation(order) % 4],
        "params_image_m": rng.uniform(20, 600, n).round(1),
    }
    x = rng.uniform(40, 80, n)
    logit_x = special.logit(x / 100)
    laion = 6.0 * (cells["pretrain_data"] == "LAION-2B")
    siglip = -5.0 * (cells["loss"] == "siglip")
    series = {
        ("zeroshot", "objects", "original", "top1"): x,
        STYLIZED: 100 * special.expit(-0.8 + 1.1 * logit_x) + laion + rng.normal(0, 1.5, n),
        TYPOGRAPHIC: 100 * special.expit(-0.3 + 0.9 * logit_x) + siglip + rng.normal(0, 1.5, n),
        ECE: 20 - 0.15 * x + rng.normal(0, 1.5, n),
    }
    rows = []
    for (task, dataset, condition, metric), values in series.items():
        for i in range(n):
            attributes = {key: value[i] for key, value in cells.items()}
            rows.append(
                {"model": f"m{i:02d}", "task": task, "dataset": dataset}
                | {"condition": condition, "metric": metric, "value": float(values[i])}
                | attributes
            )
    return rows


def _headlines(rows: list[dict]) -> pd.DataFrame:
    """The rows as the headline table has them (`headlines.COLUMNS`)."""
    frame = pd.DataFrame(rows)
    frame["label"] = frame["model"]
    frame["task_title"] = frame["task"]
    frame["condition_label"] = frame["condition"]
    frame["metric_label"] = frame["metric"].map({"top1": "top-1 (%)", "ece": "ECE (%)"})
    frame["higher_is_better"] = frame["metric"] != "ece"
    frame["interval"] = np.where(frame["metric"] == "top1", "Wilson", "")
    frame["weights_kind"] = "hub"
    frame["n"] = 500.0
    for column in COLUMNS:
        if column not in frame:
            frame[column] = None
    return frame[COLUMNS]


def _settings(**changes) -> Settings:
    values = dict(
        in_distribution="objects",
        attributes=ATTRIBUTES,
        min_group=3,
        n_resamples=300,
        confidence=0.95,
        seed=0,
    )
    return Settings(**(values | changes))


@pytest.fixture(scope="module")
def pool_result():
    return fingerprints(_headlines(_pool()), _settings())


def test_the_planted_effects_are_the_only_findings(pool_result):
    offsets = pool_result.offsets
    found = {(r.grouping, r.group, r.task) for r in pool_result.findings.itertuples()}
    assert found == PLANTED
    laion = offsets[(offsets["group"] == "LAION-2B") & (offsets["task"] == "stylized")].iloc[0]
    siglip = offsets[(offsets["group"] == "siglip") & (offsets["task"] == "typographic")].iloc[0]
    # the offsets are near the planted +6 / -5 (the pooled line leans a little towards them)
    assert 4.0 < laion["offset"] < 7.5 and laion["lo"] > 0 and laion["interval_method"] == "BCa"
    assert -6.5 < siglip["offset"] < -3.0 and siglip["hi"] < 0
    assert (offsets["status"] == "ok").all()
    # 4 groupings x (4, 4, 4, 3 groups) x 3 series: every row tested, Holm over all of them
    assert len(offsets) == 45 and pool_result.n_tested == 45
    assert pool_result.n_models == 40 and not pool_result.notes[1:]
    assert len(pool_result.pooled) == 3 and len(pool_result.group_lines) == 45


def test_holm_agrees_with_a_hand_computation(pool_result):
    p = pool_result.offsets["p"].to_numpy()
    order = np.argsort(p)
    m = len(p)
    adjusted = np.empty(m)
    running = 0.0
    for rank, index in enumerate(order):  # step-down: (m - rank) p, kept monotone, capped at 1
        running = max(running, min(1.0, (m - rank) * p[index]))
        adjusted[index] = running
    np.testing.assert_allclose(pool_result.offsets["p_holm"], adjusted, rtol=1e-12)
    small = holm(pd.Series([0.01, 0.04, math.nan, 0.03, 0.005]))
    np.testing.assert_allclose(small, [0.03, 0.06, math.nan, 0.06, 0.02])


def _tiny(series: tuple[str, str, str, str], x: list[float], y: list[float], groups: list[str]):
    rows = []
    for i, (xi, yi, group) in enumerate(zip(x, y, groups)):
        common = {"model": f"t{i}", "family": group, "params_image_m": None}
        common |= {"pretrain_data": None, "loss": None}
        rows.append({**common, "task": "zeroshot", "dataset": "objects"} | {"value": xi})
        rows[-1] |= {"condition": "original", "metric": "top1"}
        task, dataset, condition, metric = series
        rows.append({**common, "task": task, "dataset": dataset, "condition": condition} | {})
        rows[-1] |= {"metric": metric, "value": yi}
    return _headlines(rows)


def test_a_linear_series_known_answer():
    """ECE (not a share: linear). Pair slopes .1 .1 .1 .3 .4 .7: Theil-Sen slope 0.2; intercept
    median(y - 0.2 x) = median(-1, -2, -3, 2) = -1.5; residuals .5 -.5 -1.5 3.5; group A's mean
    0 (t = 0, p = 1), B's 1.0 with t = 1 / 2.5 on 1 df (Cauchy: p = 1 - 2 atan(0.4) / pi)."""
    table = _tiny(ECE, [10, 20, 30, 40], [1, 2, 3, 10], ["A", "A", "B", "B"])
    result = fingerprints(table, _settings(attributes=("family",), min_group=2))
    pooled = result.pooled.iloc[0]
    assert pooled["space"] == "linear"
    assert pooled["slope"] == pytest.approx(0.2) and pooled["intercept"] == pytest.approx(-1.5)
    np.testing.assert_allclose(result.points["residual"], [0.5, -0.5, -1.5, 3.5], atol=1e-9)
    np.testing.assert_allclose(result.points["fitted"], [0.5, 2.5, 4.5, 6.5], atol=1e-9)
    rows = result.offsets.set_index("group")
    assert rows.loc["A", "offset"] == pytest.approx(0.0, abs=1e-9)
    assert rows.loc["B", "offset"] == pytest.approx(1.0)
    assert rows.loc["A", "p"] == pytest.approx(1.0)
    assert rows.loc["B", "p"] == pytest.approx(1 - 2 * math.atan(0.4) / math.pi)
    assert rows.loc["B", "models"] == "t2, t3"


def test_a_share_is_fitted_in_logit_space():
    """Four models on y = x and one 12 points above it at x = 50: six pair slopes are 1 and the
    other four straddle it, so the logit line is y = x and the residual is 12 points exactly."""
    table = _tiny(STYLIZED, [20, 35, 50, 65, 80], [20, 35, 62, 65, 80], ["A"] * 3 + ["B"] * 2)
    result = fingerprints(table, _settings(attributes=("family",), min_group=2))
    pooled = result.pooled.iloc[0]
    assert pooled["space"] == "logit"
    assert pooled["slope"] == pytest.approx(1.0) and pooled["intercept"] == pytest.approx(0.0)
    np.testing.assert_allclose(result.points["residual"], [0, 0, 12, 0, 0], atol=1e-9)
    assert result.offsets.set_index("group").loc["A", "offset"] == pytest.approx(4.0)


def test_the_interval_is_scipys_bca_and_falls_back_where_undefined():
    values = np.array([1.0, 2.5, -0.5, 4.0, 3.0, 0.5])
    found = group_offset(values, 0.9, 400, seed=3)
    reference = stats.bootstrap(
        (values,), np.mean, confidence_level=0.9, n_resamples=400, method="BCa",
        rng=np.random.default_rng(3),
    )  # fmt: skip
    assert (found.lo, found.hi) == pytest.approx(
        (reference.confidence_interval.low, reference.confidence_interval.high)
    )
    assert found.method == "BCa" and found.p == pytest.approx(stats.ttest_1samp(values, 0).pvalue)
    flat = group_offset(np.full(4, 2.0), 0.95, 400, seed=3)
    assert (flat.mean, flat.lo, flat.hi, flat.method) == (2.0, 2.0, 2.0, PERCENTILE)
    assert math.isnan(flat.p)


def test_too_small_groups_and_series_are_marked_not_tested():
    rows = _pool(n=12, seed=1)
    for row in rows:  # groups of 2 (ViT) and 3 (ResNet) and 7 (EVA); loss: one group only
        index = int(row["model"][1:])
        row["family"] = "ViT" if index < 2 else "ResNet" if index < 5 else "EVA"
        row["loss"] = "clip"
    table = _headlines(rows)
    # a series with two models only
    extra = table[(table["task"] == "stylized") & table["model"].isin(["m00", "m01"])].copy()
    extra["dataset"] = "objects-other"
    result = fingerprints(pd.concat([table, extra]), _settings(attributes=("family", "loss")))
    rows_ = result.offsets
    main = rows_[rows_["dataset"] != "objects-other"].set_index(["grouping", "group", "task"])
    vit = main.loc[("family", "ViT", "stylized")]
    assert vit["status"] == "too small: 2 model(s) (fewer than min_group 3)"
    assert math.isnan(vit["lo"]) and math.isnan(vit["p"]) and not vit["finding"]
    assert main.loc[("family", "ResNet", "stylized"), "status"] == "ok"
    assert main.loc[("loss", "clip", "stylized"), "status"].startswith("too small: a single group")
    other = rows_[rows_["dataset"] == "objects-other"]
    assert set(other["status"]) == {"too small: 2 model(s) on the series (fewer than 3)"}
    assert other["offset"].isna().all()
    assert math.isnan(fingerprint_report.ordered(rows_)["p_holm"].iloc[-1])


def test_sizes_in_thirds_and_fine_tuning_none():
    sizes, note = size_groups(pd.Series([10.0, 20.0, 30.0, 40.0, 50.0, 600.0, None]))
    assert list(sizes) == [
        "small (10.0–20.0 M)", "small (10.0–20.0 M)", "medium (30.0–40.0 M)",
        "medium (30.0–40.0 M)", "large (50.0–600 M)", "large (50.0–600 M)", None,
    ]  # fmt: skip
    assert "thirds of the 6 model(s)" in note
    tied, note = size_groups(pd.Series([22.6, 22.6, 22.6, 11.7]))
    assert set(tied) == {"all (11.7–22.6 M)"} and "leave 1 group(s)" in note
    models = pd.DataFrame(
        {
            "weights_kind": ["hub", "checkpoint", "checkpoint", "random-init"],
            "finetune_method": [None, "wise-ft", None, None],
            "finetune_base": [None, "base", "base", None],
        },
        index=["pre", "tuned", "unknown", "random"],
    )
    groups, notes = model_groups(models, ("finetune_method",))
    assert groups["finetune_method"].to_dict() == {
        "pre": "none", "tuned": "wise-ft", "unknown": None, "random": "none"
    }  # fmt: skip
    assert "1 model(s) without one left out of that grouping (unknown)" in notes[0]


def test_an_unknown_in_distribution_set_is_named():
    from vlstress.errors import VlstressError

    with pytest.raises(VlstressError, match=r"'imagenet'.*zero-shot test sets: objects"):
        fingerprints(_headlines(_pool(n=5)), _settings(in_distribution="imagenet"))


def test_every_group_too_small_says_so_in_the_figure_and_tables():
    result = fingerprints(_headlines(_pool(n=12)), _settings(min_group=20))
    assert result.n_tested == 0 and not result.offsets["finding"].any()
    fig = fingerprint_figures.forest(result)
    texts = [t.get_text() for t in fig.texts if t.get_gid() == "untested-banner"]
    assert texts and texts[0].startswith("No offset is tested: every group has fewer than 20")
    titles = [ax.get_title(loc="left") for ax in fig.axes]
    assert titles[0] == "family: 0 finding(s), all rows too small; 3 shown"
    assert "**no offset tested: every group is too small.**" in fingerprint_report.markdown(
        result, {}
    )


def _summary(path) -> None:
    """The pool as `vlstress summarize` writes it (one record row per model and metric)."""
    rows = []
    for row in _pool():
        cells = dict.fromkeys(RECORD_COLUMNS, "")
        cells |= {k: v for k, v in row.items() if k in RECORD_COLUMNS}
        cells |= {"label": row["model"], "arch": "ViT-B-32", "weights": "w", "weights_kind": "hub"}
        cells |= {"n_params": 1000, "n_images": 500, "n_classes": 10, "seed": 0}
        cells |= {"condition_label": row["condition"], "condition_json": "{}"}
        rows.append(cells)
    pd.DataFrame(rows, columns=RECORD_COLUMNS).to_csv(path, index=False)


def test_the_command_writes_every_output(tmp_path, monkeypatch):
    import matplotlib
    from PIL import Image

    from vlstress import cli

    _summary(tmp_path / "summary.csv")
    drawn = {}
    for name in ("forest", "lines"):
        original = getattr(fingerprint_figures, name)

        def spy(result, name=name, original=original):
            drawn[name] = original(result)
            return drawn[name]

        monkeypatch.setattr(fingerprint_figures, name, spy)
    out = tmp_path / "out"
    flags = [
        "fingerprints", "--summary", str(tmp_path / "summary.csv"), "--in-distribution", "objects",
        "--attributes", "pretrain_data,loss", "--min-group", "3",
        "--bootstrap", "200", "--confidence", "0.95", "--seed", "0",
        "--out-csv", str(out / "f.csv"), "--out-md", str(out / "f.md"),
        "--out-tex", str(out / "f.tex"), "--out-json", str(out / "f.json"),
        "--out-fig", str(out / "fingerprints.png"), "--out-lines", str(out / "lines.png"),
    ]  # fmt: skip
    assert cli.main(flags) == 0
    table = pd.read_csv(out / "f.csv")
    assert {(r.grouping, r.group, r.task) for r in table[table["finding"]].itertuples()} == PLANTED
    assert list(table["finding"][:2]) == [True, True]  # findings first
    md = (out / "f.md").read_text()
    assert "**2 finding(s) among 24 tested offsets.**" in md
    # the task's title from the registry; offset [interval], Holm p, the direction
    assert re.search(
        r"\| LAION-2B +\| zero-shot classification of stylized images · objects-stylized · "
        r"shift=stylized · top-1 \(%\) +\| 10 +\| \+\d\.\d \[\d\.\d, \d\.\d\] +\| [\d.e-]+ +\| "
        r"yes: more robust \|",
        md,
    )
    assert "yes: more robust" in md and "yes: less robust" in md
    assert "over 40 models" in md and "(200 resamples, seed 0)" in md and "logit space" in md
    tex = (out / "f.tex").read_text()
    assert "\\begin{longtable}" in tex and "LAION-2B" in tex and "\\caption{Robustness" in tex
    body = json.loads((out / "f.json").read_text())
    assert body["provenance"]["step"] == "fingerprints" and body["provenance"]["seed"] == 0
    assert body["settings"]["bootstrap"] == {"method": "BCa", "n_resamples": 200, "seed": 0}
    assert len(body["findings"]) == 2 and body["findings"][0].startswith("pretrain_data=LAION-2B")
    assert len(body["offsets"]) == 24 and body["n_tested"] == 24
    with Image.open(out / "fingerprints.png") as png:
        assert '"step": "fingerprints"' in png.info["Description"]
    assert (out / "fingerprints.pdf").stat().st_size > 0 and (out / "lines.pdf").is_file()
    forest, lines = drawn["forest"], drawn["lines"]
    assert isinstance(forest, matplotlib.figure.Figure)
    titles = [ax.get_title(loc="left") for ax in forest.axes]
    assert titles == [
        "pretrain_data: 1 finding(s), 12 of 12 rows tested; 8 shown",
        "loss: 1 finding(s), 12 of 12 rows tested; 8 shown",
    ]
    first = forest.axes[0].get_yticklabels()[0]
    assert first.get_text().startswith("LAION-2B (n = 10)\nstylized")
    assert first.get_weight() == "bold" and first.get_color() == fingerprint_figures.FINDING
    legend = [t.get_text() for lg in forest.legends for t in lg.texts]
    assert "finding (Holm p < 0.05, interval excludes 0)" in legend
    assert {"zero", "interval"} <= {a.get_gid() for ax in forest.axes for a in ax.get_children()}
    assert "n = 40 models" in forest._suptitle.get_text()
    # the lines: the first grouping with a finding, a panel per series, both kinds of line
    assert lines._suptitle.get_text().startswith("Each metric by pretrain_data")
    assert len([ax for ax in lines.axes if ax.get_visible()]) == 3
    legend = [t.get_text() for lg in lines.legends for t in lg.texts]
    assert "LAION-2B (n = 10)" in legend and "pooled line (all models)" in legend
    gids = [a.get_gid() for ax in lines.axes for a in ax.get_children()]
    assert gids.count("pooled") == 3 and gids.count("group-line") == 12
    assert gids.count("band") == 3  # 40 models: each pooled line has its bootstrap band
    assert lines.axes[0].get_xlabel() == "zero-shot top-1 on objects (%)"
    assert lines.axes[0].get_ylabel() == "top-1 (%)"
    assert "(n = 40 models)" in lines.axes[0].get_title()


def test_a_share_at_zero_sits_on_the_clipped_line():
    """Every model at 0% robust top-1: the line is at the clip (0.5%) and no model is off it."""
    table = _tiny(STYLIZED, [20, 35, 50, 65], [0, 0, 0, 0], ["A", "A", "B", "B"])
    result = fingerprints(table, _settings(attributes=("family",), min_group=2))
    np.testing.assert_allclose(result.points["fitted"], 0.5)
    np.testing.assert_allclose(result.points["residual"], 0.0, atol=1e-9)
    assert set(result.offsets["interval_method"]) == {PERCENTILE}


def test_only_the_x_series_gives_an_empty_table_and_placeholders():
    table = _headlines([r for r in _pool(n=6) if r["task"] == "zeroshot"])
    result = fingerprints(table, _settings())
    assert result.offsets.empty and result.n_tested == 0
    assert "no series to compare" in fingerprint_figures.forest(result).axes[0].texts[0].get_text()
    assert "No series to compare" in fingerprint_report.markdown(result, {})


def test_the_pooled_line_band_holds_the_line_and_needs_ten_models():
    """The percentile bootstrap of the robust line over the models: seeded, holds the fitted line
    on a clean linear series, narrower with more models; none under 10 models."""
    from vlstress.suites.findings.fingerprints import fit, fitted, line_band

    rng = np.random.default_rng(1)
    grid = np.linspace(20, 80, 7)

    def band(n):
        x = rng.uniform(20, 80, n)
        y = 5 + 0.5 * x + rng.normal(0, 2, n)
        found = line_band(x, y, False, grid, 300, 0.95, seed=4)
        assert found is not None
        assert np.array_equal(found[0], line_band(x, y, False, grid, 300, 0.95, seed=4)[0])
        line = fitted(grid, *fit(x, y, False), False)
        assert (found[0] <= line + 1e-9).all() and (line <= found[1] + 1e-9).all()
        return float(np.mean(found[1] - found[0]))

    assert band(200) < band(12)
    assert line_band(np.arange(9.0), np.arange(9.0), False, grid, 300, 0.95, 0) is None
    assert line_band(np.arange(12.0), np.arange(12.0), False, grid, 0, 0.95, 0) is None
