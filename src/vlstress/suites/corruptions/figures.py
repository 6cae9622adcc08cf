"""Figures of the corruptions suite from the long summary table:

- corruption_heatmap: top-1 per (corruption, severity), one panel per model (n stated; the widest
  cell interval in the note, since a heatmap cell cannot show one);
- corruption_severity: top-1 against severity, markers per corruption at the measured severities
  (severity 0 = clean) with 95% Wilson bars over the n images, y from 0, chance dashed;
- corruption_error: top-1 error per model, clean, per corruption (mean over severities: the
  un-normalised CE) and its mean over corruptions; Wilson bars on the bars of one measurement.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.lines import Line2D

from vlstress.report.figures import (
    CHANCE_STYLE,
    WILSON_NOTE,
    FigureResult,
    _add_notes,
    _tick,
    chance_levels,
    chance_line,
    identical_note,
    identical_series,
    model_panels,
    sample_note,
    wilson_bars,
    wilson_errorbars,
)
from vlstress.report.figures import clean_name as _clean_name
from vlstress.report.figures import no_records as _none
from vlstress.report.figures import task_rows as _task
from vlstress.report.intervals import wilson_percent

WILSON_POINT_NOTE = "error bars: 95% Wilson interval over the n images of each point"


def _images(rows: pd.DataFrame) -> pd.Series:
    """The images behind each row (NaN where the records do not say)."""
    if "n_images" not in rows:
        return pd.Series(np.nan, index=rows.index)
    return pd.to_numeric(rows["n_images"], errors="coerce").astype("float64")


def _points(rows: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Top-1 per `by` (the mean over replicates: a fractional count of the same images), with
    `n` images and `measured`: how many severities it stands for."""
    grouped = rows.assign(n=_images(rows)).groupby(by, sort=False)
    return pd.DataFrame(
        {
            "value": grouped["value"].mean(),
            "n": grouped["n"].max(),
            "measured": grouped["severity"].nunique() if "severity" in rows else 1,
        }
    ).reset_index()


def widest_interval(rows: pd.DataFrame) -> float | None:
    """The width (points) of the widest 95% Wilson interval of the (model, corruption, severity)
    cells of `rows`; None where no cell's n is known."""
    cells = _points(rows, ["label", "corruption", "severity"])
    lo, hi = wilson_percent(cells["value"], cells["n"])
    width = hi - lo
    return float(np.nanmax(width)) if np.isfinite(width).any() else None


def corruption_heatmap(table: pd.DataFrame) -> FigureResult:
    data = _task(table, "corruption")
    if data.empty:
        return _none("Accuracy under corruptions", "corruption")
    labels = list(dict.fromkeys(data["label"]))
    corruptions = list(dict.fromkeys(data["corruption"]))
    severities = sorted(data["severity"].unique())
    fig, axes, firsts, lasts = model_panels(
        len(labels),
        0.9 * len(severities) + 1.5,
        0.5 * len(corruptions) + 1.8,
        extra_width=1.2,
        sharey=False,
    )
    vmax = max(1.0, float(data["value"].max()))
    for ax, label in zip(axes, labels):
        grid = data[data["label"] == label].pivot_table(
            index="corruption", columns="severity", values="value", aggfunc="mean"
        )
        grid = grid.reindex(index=corruptions, columns=severities)
        sns.heatmap(
            grid,
            ax=ax,
            annot=True,
            fmt=".1f",
            cmap="viridis",
            vmin=0,
            vmax=vmax,
            cbar=any(ax is last for last in lasts),
            cbar_kws={"label": "top-1 (%)"},
            # the corruption names once, on the left, read horizontally
            yticklabels=[c.replace("_", " ") for c in corruptions]
            if any(ax is first for first in firsts)
            else False,
        )
        ax.tick_params(axis="y", labelrotation=0)
        ax.set_title(_tick(label), fontsize="medium")
        ax.set_xlabel("severity")
        ax.set_ylabel("corruption" if any(ax is first for first in firsts) else "")
    fig.suptitle(f"Top-1 accuracy under corruptions ({_clean_name(data)})")
    widest = widest_interval(data)
    notes = [
        sample_note(data),
        "no interval in the cells"
        + (
            f": a cell's 95% Wilson interval over its n images is up to {widest:.0f} points wide "
            "(bars in corruption_severity)"
            if widest is not None
            else " (n unknown)"
        ),
    ]
    fig.tight_layout()
    _add_notes(fig, notes)
    return fig, notes


CORRUPTION_MARKERS = ("o", "s", "D", "^", "v", "P", "X", "<", ">", "h", "p", "*")


def corruption_severity(table: pd.DataFrame) -> FigureResult:
    """Top-1 at each measured severity, one marker shape and colour per corruption (side by side
    around the severity, no line through severities that were not measured), each with its 95%
    Wilson bar over the n images; the clean top-1 once, in black, at severity 0; chance dashed; y
    from 0."""
    data = _task(table, "corruption")
    if data.empty:
        return _none("Accuracy against severity", "corruption")
    clean = _task(table, "corruption", "top1_clean")
    labels = list(dict.fromkeys(data["label"]))
    corruptions = list(dict.fromkeys(data["corruption"]))
    severities = sorted({int(v) for v in data["severity"]})
    fig, axes, firsts, lasts = model_panels(len(labels), 4.2, 3.6)
    palette = dict(zip(corruptions, sns.color_palette("colorblind", len(corruptions))))
    shapes = {c: CORRUPTION_MARKERS[i % len(CORRUPTION_MARKERS)] for i, c in enumerate(corruptions)}
    spread = 0.3  # of a severity step: the corruptions side by side
    chance = set(chance_levels(data).values())
    intervals = False
    for ax, label in zip(axes, labels):
        rows = data[data["label"] == label]
        clean_point = _points(clean[clean["label"] == label], ["label"])
        if len(clean_point):
            intervals |= wilson_errorbars(ax, [0], clean_point["value"], clean_point["n"], "black")
            ax.plot(
                [0],
                [float(clean_point["value"].iloc[0])],
                marker="*",
                markersize=10,
                color="black",
                linestyle="none",
            )
        for i, name in enumerate(corruptions):
            group = _points(rows[rows["corruption"] == name], ["severity"])
            offset = (i - (len(corruptions) - 1) / 2) * spread / max(len(corruptions) - 1, 1)
            x = [int(s) + offset for s in group["severity"]]
            intervals |= wilson_errorbars(ax, x, group["value"], group["n"], palette[name])
            ax.plot(
                x,
                list(group["value"]),
                marker=shapes[name],
                color=palette[name],
                linestyle="none",
                markersize=6,
            )
        if len(chance) == 1:
            chance_line(ax, next(iter(chance)), label=None)  # named in the legend
        ax.set_title(_tick(label), fontsize="medium")
        ax.set_xlabel("severity (0 = clean)")
        ax.set_xticks([0, *severities])
        ax.set_xlim(-0.5, max(severities) + 0.5)
        ax.set_ylim(0, 100)
    for ax in firsts:
        ax.set_ylabel("top-1 accuracy (%)")
    handles = [
        Line2D([], [], marker="*", markersize=10, color="black", linestyle="none", label="clean")
    ] * (not clean.empty) + [
        Line2D([], [], marker=shapes[c], color=palette[c], linestyle="none", label=c)
        for c in corruptions
    ]
    if len(chance) == 1:
        handles.append(Line2D([], [], label=f"chance {next(iter(chance)):.3g}%", **CHANCE_STYLE))
    lasts[0].legend(
        handles=handles,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        frameon=False,
        fontsize="small",
    )
    fig.suptitle(f"Top-1 accuracy against corruption severity ({_clean_name(data)})")
    notes = [
        sample_note(data),
        "markers at the measured severities only ("
        + ", ".join(map(str, severities))
        + "), the corruptions side by side; dashed: chance (100 / classes)",
        WILSON_POINT_NOTE if intervals else "no interval drawn: n unknown",
    ]
    fig.tight_layout()
    _add_notes(fig, notes)
    return fig, notes


def corruption_error(table: pd.DataFrame) -> FigureResult:
    """Top-1 error (100 − top-1, %) per model: on the clean set, under each corruption (the mean
    over its measured severities: ImageNet-C's corruption error before the baseline's division)
    and its mean over corruptions; chance error dashed. A bar of one measurement (clean, or a
    corruption measured at one severity) gets its 95% Wilson bar; a mean over severities or
    corruptions re-uses the same images, so it gets none (the note says so)."""
    data = _task(table, "corruption")
    if data.empty:
        return _none("Corruption error per corruption", "corruption")
    clean = _task(table, "corruption", "top1_clean")
    labels = list(dict.fromkeys(data["label"]))
    corruptions = list(dict.fromkeys(data["corruption"]))
    per = _points(data, ["label", "corruption"]).rename(columns={"value": "top1"})
    mean = (
        per.groupby("label", sort=False)
        .agg(top1=("top1", "mean"), n=("n", "max"), measured=("measured", "sum"))
        .reset_index()
        .assign(corruption=MEAN)
    )
    base = _points(clean, ["label"]).rename(columns={"value": "top1"}).assign(measured=1)
    parts = [base.assign(corruption=CLEAN)] if not base.empty else []
    bars = pd.concat([*parts, per, mean], ignore_index=True)
    bars["error"] = 100.0 - bars["top1"]
    groups = [CLEAN] * (not base.empty) + [c.replace("_", " ") for c in corruptions] + [MEAN]
    bars["group"] = bars["corruption"].map(lambda c: c.replace("_", " "))
    identical = identical_series(bars.rename(columns={"group": "point", "error": "value"}))
    fig, ax = plt.subplots(figsize=(max(6.0, 0.28 * len(labels) * len(groups) + 3.0), 4.0))
    sns.barplot(
        data=bars,
        x="group",
        y="error",
        hue="label",
        order=groups,
        hue_order=labels,
        palette="colorblind",
        errorbar=None,
        ax=ax,
    )
    single = bars[bars["measured"] == 1].rename(columns={"error": "value", "n": "n_images"})
    drawn = wilson_bars(ax, single, "group", "label", groups, labels)
    chance = set(chance_levels(data).values())
    if len(chance) == 1:
        chance_line(ax, 100.0 - next(iter(chance)), label="chance error")
    ax.set_ylim(0, 100)
    ax.set_xlabel("")
    ax.set_ylabel("top-1 error (%)")
    handles, names = ax.get_legend_handles_labels()
    ax.legend(
        handles,
        [n.replace(" (", "\n(", 1) for n in names],
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        frameon=False,
        fontsize="small",
    )
    severities = sorted({int(v) for v in data["severity"]})
    fig.suptitle(f"Corruption error per corruption ({_clean_name(data)})")
    notes = [
        "each corruption: the mean top-1 error over severities "
        + ", ".join(map(str, severities))
        + " (ImageNet-C's CE before dividing by the baseline model's; the normalised CE and mCE "
        "are in results/robustness/corruptions.csv)",
        *identical_note(identical),
        (
            f"{WILSON_NOTE} of one measurement; "
            if drawn
            else "no interval drawn: n unknown or every bar a mean; "
        )
        + "a mean over severities or corruptions re-uses the same images: no interval",
        sample_note(data),
    ]
    fig.tight_layout()
    _add_notes(fig, notes)
    return fig, notes


CLEAN = "clean"
MEAN = "mean over corruptions"


FIGURES = {
    "corruption_heatmap": corruption_heatmap,
    "corruption_severity": corruption_severity,
    "corruption_error": corruption_error,
}
