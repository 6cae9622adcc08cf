"""Figures of the zero-shot suite from the long summary table (`summary.csv`): zeroshot_accuracy,
the top-1 of every model on every test set, chance (100 / classes) dashed (a placeholder that
says so when there are no records)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from vlstress.report.figures import (
    WILSON_NOTE,
    FigureResult,
    _add_notes,
    chance_levels,
    draw_chance,
    sample_note,
    wilson_bars,
)
from vlstress.report.figures import no_records as _none
from vlstress.report.figures import task_rows as _task


def zeroshot_accuracy(table: pd.DataFrame) -> FigureResult:
    data = _task(table, "zeroshot")
    if data.empty:
        return _none("Zero-shot top-1 accuracy", "zeroshot")
    sets = list(dict.fromkeys(data["dataset"].astype(str)))
    labels = list(dict.fromkeys(data["label"]))
    fig, ax = plt.subplots(figsize=(max(5.0, 1.4 * len(sets) * len(labels)), 3.8))
    sns.barplot(
        data=data,
        x="dataset",
        y="value",
        hue="label",
        order=sets,
        hue_order=labels,
        ax=ax,
        errorbar=None,
        palette="colorblind",
    )
    bars = wilson_bars(
        ax, data.assign(dataset=data["dataset"].astype(str)), "dataset", "label", sets, labels
    )
    chance = chance_levels(data)
    drawn = draw_chance(ax, [chance.get(name) for name in sets])
    ax.set_ylim(0, 100)
    ax.set_xlabel("test set")
    ax.set_ylabel("top-1 accuracy (%)")
    ax.set_title("Zero-shot top-1 accuracy")
    sns.move_legend(ax, "upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, title=None)
    notes = [f"{len(sets)} test set(s): {', '.join(sets)}", sample_note(data)]
    if bars:
        notes.append(WILSON_NOTE)
    notes.append(
        "dashed: chance (100 / classes)" if drawn else "chance unknown: no class counts recorded"
    )
    fig.tight_layout()
    _add_notes(fig, notes)
    return fig, notes


FIGURES = {
    "zeroshot_accuracy": zeroshot_accuracy,
}
