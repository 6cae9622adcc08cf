"""The stylized suite's figure: zero-shot top-1 on the clean test set and on its stylized copy, one
pair of bars per model, chance (100 / classes) dashed."""

from __future__ import annotations

import json

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from vlstress.report.figures import (
    WILSON_NOTE,
    FigureResult,
    _add_notes,
    _tick,
    chance_levels,
    chance_line,
    sample_note,
    wilson_bars,
)
from vlstress.report.figures import no_records as _none


def stylized_accuracy(table: pd.DataFrame) -> FigureResult:
    rows = table[(table["task"] == "stylized") & table["metric"].isin(["top1", "top1_clean"])]
    if rows.empty:
        return _none("Zero-shot accuracy on stylized images", "stylized")
    rows = rows.assign(
        which=rows["metric"].map({"top1_clean": "clean", "top1": "stylized (AdaIN)"})
    )
    labels = list(dict.fromkeys(rows["label"]))
    fig, ax = plt.subplots(figsize=(max(4.8, 2.2 * len(labels) + 1.5), 3.6))
    sns.barplot(
        data=rows,
        x="label",
        y="value",
        hue="which",
        order=labels,
        hue_order=["clean", "stylized (AdaIN)"],
        palette=sns.color_palette("colorblind", 2),
        errorbar=None,
        ax=ax,
    )
    bars = wilson_bars(ax, rows, "label", "which", labels, ["clean", "stylized (AdaIN)"])
    ax.set_xticks(range(len(labels)), [_tick(label) for label in labels])
    ax.set_xlabel("")
    ax.set_ylabel("zero-shot top-1 (%)")
    ax.set_ylim(0, 100)
    chance = set(chance_levels(rows).values())
    if len(chance) == 1:  # the stylized copy keeps the clean set's classes
        chance_line(ax, chance.pop())
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize="small")
    clean = sorted({str(name).removesuffix("-stylized") for name in rows["dataset"]})
    fig.suptitle(f"Zero-shot accuracy on stylized images ({', '.join(clean)})")
    networks = sorted(
        {
            str(json.loads(c).get("networks"))
            for c in rows.loc[rows["task"] == "stylized", "condition_json"]
        }
    )
    random = any(n.startswith("random-init") for n in networks)
    notes = [
        "each image styled by a seeded choice of style image (AdaIN); networks: "
        + ", ".join(networks)
        + (" (random weights: not a real stylization)" if random else ""),
        sample_note(rows),
        "dashed: chance (100 / classes)" if chance_levels(rows) else "chance unknown",
        *([WILSON_NOTE] if bars else []),
    ]
    fig.tight_layout()
    _add_notes(fig, notes)
    return fig, notes


FIGURES = {"stylized_accuracy": stylized_accuracy}
