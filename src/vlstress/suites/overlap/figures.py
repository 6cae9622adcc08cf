"""The overlap suite's figure: zero-shot top-1 on the near-duplicates of training images and on the
clean rest, a pair of bars per model, one panel per test set."""

from __future__ import annotations

import json

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from vlstress.report.figures import (
    FigureResult,
    _add_notes,
    _tick,
    sample_note,
    wilson_bars,
)
from vlstress.report.figures import no_records as _none

SUBSETS = {"top1_overlap": "near-duplicate of a training image", "top1_clean_subset": "clean rest"}
# the count of images behind each subset's top-1 (the interval's n)
COUNTS = {"top1_overlap": "n_overlap", "top1_clean_subset": "n_clean_subset"}


def overlap_accuracy(table: pd.DataFrame) -> FigureResult:
    rows = table[(table["task"] == "overlap") & table["metric"].isin(list(SUBSETS))].copy()
    if rows.empty:
        return _none("Accuracy on overlapping and clean test images", "overlap")
    rows["subset"] = rows["metric"].map(SUBSETS)
    rows["set"] = rows["condition_json"].map(lambda c: json.loads(c)["set"])
    count = table[(table["task"] == "overlap") & table["metric"].isin(list(COUNTS.values()))]
    rows["n_items"] = [
        _count(count, model, condition, COUNTS[metric])
        for model, condition, metric in zip(rows["model"], rows["condition"], rows["metric"])
    ]
    sets, labels = list(dict.fromkeys(rows["set"])), list(dict.fromkeys(rows["label"]))
    counts = table[(table["task"] == "overlap") & (table["metric"] == "n_overlap")]
    fig, axes = plt.subplots(
        1, len(sets), figsize=(2.4 * len(labels) * len(sets) + 2.5, 3.8), squeeze=False,
        sharey=True,
    )  # fmt: skip
    bars = 0
    for ax, name in zip(axes[0], sets):
        sns.barplot(
            data=rows[rows["set"] == name],
            x="label",
            y="value",
            hue="subset",
            order=labels,
            hue_order=list(SUBSETS.values()),
            palette=sns.color_palette("colorblind", 2),
            errorbar=None,
            ax=ax,
        )
        bars += wilson_bars(
            ax, rows[rows["set"] == name], "label", "subset", labels, list(SUBSETS.values()),
            n_column="n_items",
        )  # fmt: skip
        n = counts[counts["condition_json"].map(lambda c: json.loads(c)["set"]) == name]["value"]
        flagged = int(n.iloc[0]) if len(n) else 0
        ax.set_title(f"{name} ({flagged} flagged)", fontsize="medium")
        ax.set_xticks(range(len(labels)), [_tick(label) for label in labels])
        ax.set_xlabel("")
        ax.get_legend().remove()
    axes[0][0].set_ylabel("zero-shot top-1 (%)")
    axes[0][0].set_ylim(0, 105)
    handles, names = axes[0][0].get_legend_handles_labels()
    axes[0][-1].legend(
        handles, names, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False,
        fontsize="small",
    )  # fmt: skip
    fig.suptitle("Accuracy on test images with and without a near-duplicate in training")
    notes = [
        "flags from one detector model for every model: the same subsets; a missing bar: no image",
        sample_note(rows),
        *(["error bars: 95% Wilson interval over the images of each subset"] if bars else []),
    ]
    fig.tight_layout()
    _add_notes(fig, notes)
    return fig, notes


def _count(count: pd.DataFrame, model: str, condition: str, metric: str) -> float:
    found = count[
        (count["model"] == model) & (count["condition"] == condition) & (count["metric"] == metric)
    ]["value"]
    return float(found.iloc[0]) if len(found) == 1 else float("nan")


FIGURES = {"overlap_accuracy": overlap_accuracy}
