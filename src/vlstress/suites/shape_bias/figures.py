"""Figures of the shape-bias suite from the summary: shape_bias, the standard cue-conflict plot
(model-vs-human): one row per shape category, the fraction of shape decisions of every model side
by side (the top axis reads the same points as the fraction of texture decisions), each model's
pooled value as a vertical line in its colour, humans' 0.96 as a grey reference line. Every point
has its 95% Wilson interval over its shape + texture decisions (n) as a horizontal bar; the legend
gives each model's pooled value with its interval and n."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from vlstress.report.figures import FigureResult, _add_notes, sample_note
from vlstress.report.figures import metric_rows as _rows
from vlstress.report.figures import no_records as _none
from vlstress.report.intervals import wilson_percent
from vlstress.suites.shape_bias.decisions import ALL, HUMAN_SHAPE_BIAS
from vlstress.suites.shape_bias.table import DECISIVE, count_text, decisive_count

MARKERS = ("o", "s", "D", "^", "v", "P", "X", "<", ">", "h")


def shape_bias(table: pd.DataFrame) -> FigureResult:
    rows = _rows(table, "shape_bias", ["shape_bias", "n_conflict", *DECISIVE])
    if rows.empty or not (rows["metric"] == "shape_bias").any():
        return _none("Shape bias (cue-conflict)", "shape_bias")
    rows["category"] = rows["condition_dict"].map(lambda c: c.get("category"))
    metrics = rows.pivot_table(index=["label", "category"], columns="metric", values="value")
    metrics = metrics.reindex(columns=["shape_bias", "n_conflict", *DECISIVE])
    means = metrics["shape_bias"]  # over replicates
    decided = decisive_count(metrics)  # the n of each point
    lows, highs = (
        pd.Series(b / 100.0, index=metrics.index) for b in wilson_percent(100.0 * means, decided)
    )
    rows = rows[rows["metric"] == "shape_bias"]
    models = list(dict.fromkeys(rows["label"]))
    categories = sorted(c for c in set(rows["category"]) if c != ALL)
    colours = sns.color_palette("colorblind", len(models))
    fig, ax = plt.subplots(figsize=(6.4, 0.32 * len(categories) + 2.4))
    y = np.arange(len(categories))
    notes = []
    ax.axvline(
        HUMAN_SHAPE_BIAS,
        color="0.55",
        linewidth=2.0,
        label=f"humans (pooled): {HUMAN_SHAPE_BIAS:.2f}",
    )
    for i, (model, colour) in enumerate(zip(models, colours)):
        values = np.array([means.get((model, c), np.nan) for c in categories])
        offset = (i - (len(models) - 1) / 2) * min(0.18, 0.7 / max(1, len(models)))
        overall = means.get((model, ALL), np.nan)
        lo = np.array([lows.get((model, c), np.nan) for c in categories])
        hi = np.array([highs.get((model, c), np.nan) for c in categories])
        ok = np.isfinite(lo) & np.isfinite(values)
        ax.errorbar(
            values[ok],
            (y + offset)[ok],
            xerr=[np.maximum(values - lo, 0)[ok], np.maximum(hi - values, 0)[ok]],
            fmt="none",
            ecolor=colour,
            elinewidth=0.8,
            alpha=0.6,
            zorder=2.5,
        )
        ax.scatter(
            values,
            y + offset,
            marker=MARKERS[i % len(MARKERS)],
            color=colour,
            edgecolor="0.3",
            linewidth=0.3,
            s=38,
            zorder=3,
            label=pooled_label(
                model,
                overall,
                lows.get((model, ALL)),
                highs.get((model, ALL)),
                decided.get((model, ALL)),
            ),
        )
        if np.isfinite(overall):
            ax.axvline(overall, color=colour, linewidth=1.2, linestyle="--", zorder=2)
        undefined = [c for c, v in zip(categories, values) if not np.isfinite(v)]
        if undefined:
            notes.append(
                f"{model}: no shape or texture decision (shape bias undefined) for "
                f"{', '.join(undefined)}"
            )
    ax.set_yticks(y, categories)
    ax.set_ylim(len(categories) - 0.5, -0.5)
    ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel("fraction of shape decisions")

    def flip(x):  # shape fraction <-> texture fraction
        return 1 - x

    top = ax.secondary_xaxis("top", functions=(flip, flip))
    top.set_xlabel("fraction of texture decisions")
    ax.grid(axis="y", visible=False)
    datasets = ", ".join(sorted(set(rows["dataset"].astype(str))))
    ax.set_title(f"Shape bias per shape category ({datasets})", fontsize="medium")
    ax.legend(
        loc="upper center",
        bbox_to_anchor=(0.5, -0.12),
        ncol=1,
        frameon=False,
        fontsize="small",
        title="dashed: a model's pooled shape bias",
        title_fontsize="small",
    )
    notes.insert(0, sample_note(rows, "cue-conflict images"))
    notes.insert(1, INTERVAL_NOTE)
    fig.tight_layout()
    fig.canvas.draw()  # the notes just below the legend, wherever the layout put it
    legend = ax.get_legend()
    bottom = legend.get_window_extent().y0 if legend is not None else 0.0
    _add_notes(fig, notes, y=float(fig.transFigure.inverted().transform((0, bottom))[1]) - 0.01)
    return fig, notes


INTERVAL_NOTE = (
    "bars and [lo, hi]: 95% Wilson interval over the n shape + texture decisions of each point "
    "(the legend gives each model's pooled n)"
)


def pooled_label(
    model: str, value: float, lo: float | None, hi: float | None, n: float | None
) -> str:
    """`RN50: 0.50 [0.30, 0.70], n = 20`: a model's pooled shape bias for the legend."""
    if not np.isfinite(value):
        return f"{model}: undefined (n = {count_text(n if n is not None else np.nan)})"
    if lo is None or hi is None or not np.isfinite(lo):
        return f"{model}: {value:.2f}"
    return f"{model}: {value:.2f} [{lo:.2f}, {hi:.2f}], n = {count_text(float(n or 0))}"


FIGURES = {
    "shape_bias": shape_bias,
}
