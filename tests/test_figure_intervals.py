"""Figures draw the headline table's intervals (`vlstress figures --headlines`): each error bar
spans exactly the [lo, hi] the table gives its (category, hue) bar, vertical or horizontal; a bar
without finite bounds gets none; a figure function gets the table only when it takes one; the
calibration, OOD and stability figures draw one error bar per case with an interval and say how
many have none."""

from __future__ import annotations

import logging
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import seaborn as sns  # noqa: E402
from matplotlib.container import ErrorbarContainer  # noqa: E402

from vlstress.record import write_records  # noqa: E402
from vlstress.report import figure_set  # noqa: E402
from vlstress.report.figures import bar_intervals  # noqa: E402
from vlstress.report.headlines import COLUMNS  # noqa: E402
from vlstress.report.records import collect  # noqa: E402

from report_fixtures import record  # noqa: E402


def _spans(ax) -> list[tuple[float, float, float]]:
    """(position, low end, high end) of every error bar on the axes, as drawn."""
    found = []
    for container in ax.containers:
        if not isinstance(container, ErrorbarContainer):
            continue
        for collection in container.lines[2]:
            for segment in collection.get_segments():
                (x0, y0), (x1, y1) = segment
                if x0 == x1:  # vertical
                    found.append((round(x0, 6), min(y0, y1), max(y0, y1)))
                else:
                    found.append((round(y0, 6), min(x0, x1), max(x0, x1)))
    return sorted(found)


@pytest.mark.parametrize("orient", ["v", "h"])
def test_bar_intervals_span_the_given_bounds(orient):
    data = pd.DataFrame(
        {"cat": ["a", "a", "b", "b"], "hue": ["x", "y", "x", "y"], "value": [10.0, 20, 30, 40]}
    )
    fig, ax = plt.subplots()
    axes = {"x": "cat", "y": "value"} if orient == "v" else {"y": "cat", "x": "value"}
    sns.barplot(
        data=data, **axes, hue="hue", order=["a", "b"], hue_order=["x", "y"], orient=orient, ax=ax
    )
    bounds = {
        ("a", "x"): (10.0, 5.0, 12.0),
        ("b", "y"): (40.0, 38.0, 47.5),
        ("a", "y"): (20.0, np.nan, np.nan),  # no interval: no error bar
    }
    assert bar_intervals(ax, bounds, ["a", "b"], ["x", "y"], orient=orient) == 2
    spans = _spans(ax)
    assert [(lo, hi) for _, lo, hi in spans] == [(5.0, 12.0), (38.0, 47.5)]
    # each at its bar's centre: a/x left of 0, b/y right of 1 (seaborn's hue dodge)
    assert spans[0][0] < 0 < 1 < spans[1][0]
    plt.close(fig)


def test_draw_hands_the_table_only_to_functions_that_take_it(tmp_path):
    seen = {}

    def plain(table):
        seen["plain"] = True
        return plt.figure(), []

    def with_intervals(table, headlines=None):
        seen["with"] = headlines
        return plt.figure(), []

    summary = tmp_path / "summary.csv"
    summary.write_text("x\n1\n", encoding="utf-8")
    headlines = tmp_path / "headlines.csv"
    headlines.write_text("y\n2\n", encoding="utf-8")
    table = pd.DataFrame({"label": [], "weights_kind": []})
    frame = pd.DataFrame({"lo": [1.0]})
    figure_set.draw(
        {"plain": plain, "with": with_intervals},
        ["plain", "with"],
        table,
        summary,
        tmp_path / "out",
        logging.getLogger("test"),
        (headlines, frame),
    )
    assert seen["plain"] and seen["with"] is frame
    assert (tmp_path / "out" / "with.png").is_file()


def _headlines(summary: pd.DataFrame, metrics: dict[str, float]) -> pd.DataFrame:
    """A headline table for the summary's rows of `metrics`: [value - d, value + d] with d the
    metric's half width (NaN: no interval)."""
    rows = summary[summary["metric"].isin(metrics)].copy()
    half = rows["metric"].map(metrics)
    rows["lo"], rows["hi"] = rows["value"] - half, rows["value"] + half
    rows["interval"] = np.where(half.notna(), "BCa bootstrap", "fewer than 10 items to resample")
    for column in COLUMNS:
        if column not in rows:
            rows[column] = np.nan
    rows["percentile"] = np.nan
    return rows


def _summary(tmp_path: Path, task: str, conditions: list[dict], metrics: dict) -> pd.DataFrame:
    paths = []
    for model in ("vit-b-32-random", "rn50-openai"):
        paths.append(tmp_path / model / f"{task}.json")
        write_records(paths[-1], [record(model, task, c, metrics) for c in conditions])
    return collect(paths)


def test_calibration_and_ood_figures_draw_each_interval_and_count_the_rest(tmp_path):
    from vlstress.suites.calibration.figures import calibration_ece
    from vlstress.suites.ood.figures import ood_auroc

    summary = _summary(
        tmp_path,
        "calibration",
        [{"set": "demo", "split": "held-out"}, {"set": "demo", "corruption": "fog", "severity": 1}],
        {"ece": 12.0, "ece_ts": 6.0, "temperature": 1.2},
    )
    fig, notes = calibration_ece(summary, _headlines(summary, {"ece": 3.0, "ece_ts": np.nan}))
    spans = [s for ax in fig.axes for s in _spans(ax)]
    # 2 models x 2 sets of ECE with an interval; ECE (T) has none
    assert [(lo, hi) for _, lo, hi in spans] == [(9.0, 15.0)] * 4
    assert "4 of 8 bars have none" in notes[-1] and "BCa bootstrap" in notes[-1]
    plt.close(fig)
    fig, notes = calibration_ece(summary)  # no table: no error bar, the old note
    assert not [s for ax in fig.axes for s in _spans(ax)] and "no interval" in notes[-1]
    plt.close(fig)

    summary = _summary(
        tmp_path / "ood",
        "ood",
        [{"ood": "scenes", "score": s} for s in ("mcm", "energy")],
        {"auroc": 70.0, "fpr95": 50.0},
    )
    fig, notes = ood_auroc(summary, _headlines(summary, {"auroc": 5.0}))
    assert [(lo, hi) for _, lo, hi in _spans(fig.axes[0])] == [(65.0, 75.0)] * 4
    assert "error bars" in notes[-1] and "have none" not in notes[-1]
    plt.close(fig)


def test_stability_figure_draws_flip_probability_intervals_only(tmp_path):
    from vlstress.suites.stability.figures import stability

    summary = _summary(
        tmp_path,
        "stability",
        [{"set": "objects", "perturbation": p, "difficulty": 1} for p in ("rotate", "brightness")],
        {"flip_probability": 4.0, "top5_distance": 0.5},
    )
    fig, notes = stability(summary, _headlines(summary, {"flip_probability": 1.5}))
    flips, distances = fig.axes[:2]
    assert [(lo, hi) for _, lo, hi in _spans(flips)] == [(2.5, 5.5)] * 4
    assert _spans(distances) == []
    assert any("error bars" in n for n in notes)
    plt.close(fig)


def test_correspondence_bins_draw_each_binned_recall_interval_dodged(tmp_path):
    from vlstress.suites.correspondence.figures import correspondence_bins

    base = {"protocol": "scannet", "set": "scenes", "bin_by": "rotation", "threshold": "10px"}
    summary = _summary(
        tmp_path,
        "correspondence",
        [{**base, "bin": b} for b in ("0-15", "15-30")],
        {"recall": 40.0, "n_pairs": 20},
    )
    fig, notes = correspondence_bins(summary, _headlines(summary, {"recall": 8.0}))
    spans = _spans(fig.axes[0])
    assert [(lo, hi) for _, lo, hi in spans] == [(32.0, 48.0)] * 4
    # the two models' bars at each bin are side by side, not on top of each other
    positions = sorted(x for x, _, _ in spans)
    assert positions[0] < 0 < positions[1] < 1 - 0.01 < 1 < positions[3]
    assert "error bars" in notes[-1] and "have none" not in notes[-1]
    plt.close(fig)
