"""Figures of the correspondence suite from the long summary table, CNN against transformer image
towers as the holistic paper compares them (one line per model, its colour the tower's kind):

- correspondence_bins: recall at the set's binned threshold against the rotation between the views
  (SPair: the viewpoint-variation bucket), one panel per set, n pairs per bin stated;
- correspondence_recall: recall against the error threshold over all pairs, one panel per set.

Given the headline table, each binned recall carries its 95% BCa bootstrap interval over the pairs
(none under 10 pairs), each model's bars shifted a little so that they do not hide each other.
"""

from __future__ import annotations

import json

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.lines import Line2D

from vlstress.report.figures import (
    TOWER_ORDER,
    FigureResult,
    _add_notes,
    interval_note,
    tower_colours,
)
from vlstress.report.figures import no_records as _none
from vlstress.report.headlines import interval_bounds

TASK = "correspondence"
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
LINES = ("-", "--", ":", "-.")
COUNTS = ("n_pairs", "n_matches", "n_keypoints", "recall")
BIN_TITLES = {
    "rotation": "rotation between the views (degrees)",
    "viewpoint": "viewpoint variation",
}


def correspondence_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The suite's rows with their condition's set, protocol, bin and bin kind as columns, and the
    tower kind (`unknown` where the summary has none)."""
    rows = table[table["task"] == TASK].copy()
    if rows.empty:
        return rows
    conditions = rows["condition_json"].map(json.loads)
    for key in ("set", "protocol", "bin", "bin_by", "threshold"):
        rows[key] = conditions.map(lambda c, key=key: c.get(key))
    tower = rows["tower"] if "tower" in rows else pd.Series("", index=rows.index)
    rows["tower_kind"] = tower.fillna("").astype(str).replace("", "unknown")
    return rows


def model_styles(rows: pd.DataFrame) -> dict[str, dict]:
    """Each model's line style: colour by tower kind (as every figure comparing towers), marker
    and dash by its rank within it."""
    colours = tower_colours()
    styles, seen = {}, {tower: 0 for tower in TOWER_ORDER}
    for label, tower in rows.drop_duplicates("label")[["label", "tower_kind"]].itertuples(
        index=False
    ):
        tower = tower if tower in colours else "unknown"
        rank = seen[tower]
        seen[tower] += 1
        styles[label] = {
            "color": colours[tower],
            "marker": MARKERS[rank % len(MARKERS)],
            "linestyle": LINES[rank % len(LINES)],
            "tower": tower,
        }
    return styles


def _legend(fig: plt.Figure, styles: dict[str, dict]) -> None:
    handles = [
        Line2D(
            [],
            [],
            color=s["color"],
            marker=s["marker"],
            linestyle=s["linestyle"],
            label=f"{label} [{s['tower']}]",
        )
        for label, s in sorted(styles.items(), key=lambda kv: (kv[1]["tower"], kv[0]))
    ]
    fig.legend(
        handles=handles,
        loc="upper left",
        bbox_to_anchor=(1.0, 0.9),
        frameon=False,
        fontsize="small",
        title="model [image tower]",
    )


def _finish(fig: plt.Figure, title: str, styles: dict[str, dict], notes: list[str]) -> FigureResult:
    """Title above the panels, the legend to their right, the notes under them."""
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.02, 1, 0.95))
    _legend(fig, styles)
    _add_notes(fig, notes, y=0.0)
    return fig, notes


def _panels(sets: list[str]) -> tuple[plt.Figure, list]:
    fig, axes = plt.subplots(
        1, len(sets), figsize=(4.2 * len(sets), 3.6), squeeze=False, sharey=True
    )
    return fig, list(axes[0])


METHOD = "95% seeded BCa bootstrap interval of the recall over the pairs of its bin"
DODGE = 0.06  # x shift between two models' error bars


def correspondence_bins(table: pd.DataFrame, headlines: pd.DataFrame | None = None) -> FigureResult:
    title = "Correspondence recall against viewpoint change"
    rows = correspondence_rows(table)
    if rows.empty:
        return _none(title, TASK)
    binned = rows[(rows["bin"] != "all")]
    if binned.empty:
        return _none(title, TASK)
    styles = model_styles(rows)
    sets = list(dict.fromkeys(binned["set"]))
    fig, axes = _panels(sets)
    notes = []
    drawn = points = 0
    for ax, name in zip(axes, sets, strict=True):
        mine = binned[binned["set"] == name]
        bins = list(dict.fromkeys(mine["bin"]))
        recall = mine[mine["metric"] == "recall"]
        bounds = interval_bounds(recall, headlines, ["label", "bin"])
        for rank, (label, style) in enumerate(styles.items()):
            values = recall[recall["label"] == label].set_index("bin")["value"]
            if values.empty:
                continue
            ax.plot(
                range(len(bins)),
                [values.get(b) for b in bins],
                color=style["color"],
                marker=style["marker"],
                linestyle=style["linestyle"],
            )
            shift = DODGE * (rank - (len(styles) - 1) / 2)
            for x, b in enumerate(bins):
                points += b in values.index
                value, lo, hi = bounds.get((label, b), (float("nan"),) * 3)
                if not (pd.notna(lo) and pd.notna(hi)):
                    continue
                ax.errorbar(
                    x + shift,
                    value,
                    yerr=[[max(value - lo, 0.0)], [max(hi - value, 0.0)]],
                    fmt="none",
                    ecolor=style["color"],
                    elinewidth=1.0,
                    capsize=2.0,
                )
                drawn += 1
        pairs = mine[mine["metric"] == "n_pairs"].groupby("bin", sort=False)["value"].max()
        ax.set_xticks(range(len(bins)), [f"{b}\n(n={int(pairs.get(b, 0))})" for b in bins])
        ax.set_xlabel(BIN_TITLES.get(str(mine["bin_by"].iloc[0]), "bin"))
        ax.set_title(
            f"{name} ({mine['protocol'].iloc[0]}, {mine['threshold'].iloc[0]})", fontsize="medium"
        )
        ax.set_ylim(0, 100)
        empty = [b for b in bins if int(pairs.get(b, 0)) == 0]
        if empty:
            notes.append(f"{name}: no pairs in bin(s) {', '.join(empty)} (no point drawn)")
    axes[0].set_ylabel("recall (%) at the binned threshold")
    notes.append(
        "n: pairs per bin; "
        + (
            interval_note(METHOD, drawn, points, "points")
            if headlines is not None
            else "no interval drawn"
        )
    )
    return _finish(fig, title, styles, notes)


def correspondence_recall(table: pd.DataFrame) -> FigureResult:
    title = "Correspondence recall against the error threshold"
    rows = correspondence_rows(table)
    if rows.empty:
        return _none(title, TASK)
    overall = rows[(rows["bin"] == "all") & ~rows["metric"].isin(COUNTS)]
    if overall.empty:
        return _none(title, TASK)
    styles = model_styles(rows)
    sets = list(dict.fromkeys(overall["set"]))
    fig, axes = _panels(sets)
    notes = []
    for ax, name in zip(axes, sets, strict=True):
        mine = overall[overall["set"] == name]
        metrics = threshold_order(mine["metric"])
        for label, style in styles.items():
            values = mine[mine["label"] == label].set_index("metric")["value"]
            if values.empty:
                continue
            ax.plot(
                range(len(metrics)),
                [values.get(m) for m in metrics],
                color=style["color"],
                marker=style["marker"],
                linestyle=style["linestyle"],
            )
        ax.set_xticks(range(len(metrics)), [threshold_tick(m) for m in metrics])
        ax.set_xlabel("error threshold")
        pairs = rows[(rows["set"] == name) & (rows["bin"] == "all") & (rows["metric"] == "n_pairs")]
        n = int(pairs["value"].max()) if not pairs.empty else 0
        ax.set_title(f"{name} ({mine['protocol'].iloc[0]}, n={n} pairs)", fontsize="medium")
        ax.set_ylim(0, 100)
    axes[0].set_ylabel("recall (%)")
    notes.append(
        "no interval drawn: only the recall at the binned threshold has one (results/headlines.md,"
        " the table's cells), the other thresholds keep no per-pair outcomes"
    )
    return _finish(fig, title, styles, notes)


UNIT_ORDER = ("cm", "px", "box")


def threshold_order(metrics) -> list[str]:
    """Threshold metrics by unit (cm, px, box), then value: `recall_5px` before `recall_10px`."""

    def key(metric: str) -> tuple[int, float]:
        number, unit = threshold_tick(metric).split(" ")
        return UNIT_ORDER.index(unit) if unit in UNIT_ORDER else len(UNIT_ORDER), float(number)

    return sorted(dict.fromkeys(metrics), key=key)


def threshold_tick(metric: str) -> str:
    """`recall_10px` -> `10 px`; `pck_0.1box` -> `0.1 box`."""
    value = metric.split("_", 1)[-1]
    for unit in ("px", "cm", "box"):
        if value.endswith(unit):
            return f"{value.removesuffix(unit)} {unit}"
    return value


FIGURES = {
    "correspondence_bins": correspondence_bins,
    "correspondence_recall": correspondence_recall,
}
