"""Figures of the typographic suite: typographic_attack, the clean and attacked top-1 and the attack
success rate per model."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from vlstress.report.figures import (
    WILSON_NOTE,
    FigureResult,
    _add_notes,
    _dataset,
    _tick,
    sample_note,
    wilson_bars,
)
from vlstress.report.figures import no_records as _none


def typographic_attack(table: pd.DataFrame) -> FigureResult:
    rows = table[
        (table["task"] == "typographic")
        & table["metric"].isin(["top1_clean", "top1", "attack_success"])
    ]
    if rows.empty:
        return _none("Typographic attack", "typographic")
    names = {
        "top1_clean": "top-1, clean",
        "top1": "top-1, attacked",
        "attack_success": "attack success (pred. = written class)",
    }
    data = rows.assign(measure=rows["metric"].map(names))
    fig, ax = plt.subplots(figsize=(max(5.0, 2.0 * data["label"].nunique()) + 2.5, 3.8))
    sns.barplot(
        data=data,
        x="label",
        y="value",
        hue="measure",
        hue_order=list(names.values()),
        ax=ax,
        errorbar=None,
        palette="colorblind",
    )
    labels = list(dict.fromkeys(data["label"]))
    bars = wilson_bars(ax, data, "label", "measure", labels, list(names.values()))
    ax.set_xticks(ax.get_xticks())
    ax.set_xticklabels([_tick(t.get_text()) for t in ax.get_xticklabels()], fontsize="small")
    ax.set_xlabel("")
    ax.set_ylabel("%")
    ax.set_ylim(0, max(100.0, float(np.nanmax(data["value"])) + 5))
    ax.set_title(f"Typographic attack ({_dataset(data)})")
    sns.move_legend(ax, "upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, title=None)
    notes = [sample_note(data), *([WILSON_NOTE] if bars else [])]
    fig.tight_layout()
    _add_notes(fig, notes)
    return fig, notes


FIGURES = {
    "typographic_attack": typographic_attack,
}
