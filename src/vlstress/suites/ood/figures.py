"""Figures of the OOD suite from the summary: ood_auroc, the AUROC of every OOD score, one panel per
OOD set, bars per model (the ROC curves of each pair are drawn by `vlstress ood-detect`: `roc`). A
panel's title gives the n in-distribution images; given the headline table, each bar carries its
95% BCa bootstrap interval, and a note says which bars have none and why."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from vlstress.report.figures import (
    FigureResult,
    _add_notes,
    _tick,
    bar_intervals,
    interval_note,
    sample_note,
)
from vlstress.report.figures import metric_rows as _rows
from vlstress.report.figures import no_records as _none
from vlstress.report.headlines import interval_bounds


def ood_auroc(table: pd.DataFrame, headlines: pd.DataFrame | None = None) -> FigureResult:
    rows = _rows(table, "ood", ["auroc"])
    if rows.empty:
        return _none("OOD detection AUROC", "ood")
    rows["ood"] = rows["condition_dict"].map(lambda c: c.get("ood"))
    rows["score"] = rows["condition_dict"].map(lambda c: c.get("score"))
    sets = list(dict.fromkeys(rows["ood"]))
    labels = list(dict.fromkeys(rows["label"]))
    drawn = 0
    fig, axes = plt.subplots(
        1,
        len(sets),
        figsize=(max(5.0, 1.5 * rows["score"].nunique() * 1.2) * len(sets) + 2.0, 3.8),
        squeeze=False,
        sharey=True,
    )
    for ax, name in zip(axes[0], sets):
        mine = rows[rows["ood"] == name]
        scores = list(dict.fromkeys(mine["score"]))
        sns.barplot(
            data=mine,
            x="score",
            y="value",
            hue="label",
            order=scores,
            hue_order=labels,
            ax=ax,
            errorbar=None,
            palette="colorblind",
        )
        bounds = interval_bounds(mine, headlines, ["score", "label"])
        drawn += bar_intervals(ax, bounds, scores, labels)
        ax.axhline(50.0, color="0.4", linewidth=0.8, linestyle="--")
        sizes = _counts(mine["n_images"])
        outside = _counts(mine["n_ood_images"]) if "n_ood_images" in mine else ""
        inside = ", ".join(sorted(set(mine["dataset"].astype(str))))
        ax.set_title(
            f"{inside} (n = {sizes or '?'}) vs {name} (n = {outside or '?'})", fontsize="medium"
        )
        ax.set_xlabel("score")
        ax.set_ylim(0, 100)
        ax.legend_.remove()
    axes[0][0].set_ylabel("AUROC (%)")
    handles, names = axes[0][0].get_legend_handles_labels()
    axes[0][-1].legend(
        handles,
        [_tick(n) for n in names],
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        frameon=False,
        fontsize="small",
    )
    fig.suptitle("Out-of-distribution detection with the zero-shot classifier (dashed: chance)")
    notes = [
        sample_note(rows, "in-distribution images"),
        interval_note(METHOD, drawn, len(rows)) if headlines is not None else NO_INTERVAL,
    ]
    fig.tight_layout()
    _add_notes(fig, notes)
    return fig, notes


def _counts(values: pd.Series) -> str:
    """`30`, or `30/40` where the models' counts differ."""
    return "/".join(str(int(v)) for v in sorted(set(pd.to_numeric(values).dropna())))


NO_INTERVAL = (
    "no interval: AUROC is not a share of images, and the bars are point estimates, so a small "
    "difference between two bars may be noise"
)


METHOD = (
    "95% seeded BCa bootstrap interval, in- and out-of-distribution images resampled each "
    "within itself"
)


FIGURES = {
    "ood_auroc": ood_auroc,
}
