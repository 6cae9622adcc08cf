"""The video suite's figure: pm-k against k, one line per model, one panel per video test set
(k = 0 is the anchors' accuracy)."""

from __future__ import annotations

import json

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from vlstress.report.figures import FigureResult, _add_notes
from vlstress.report.figures import no_records as _none


def video_pmk(table: pd.DataFrame) -> FigureResult:
    rows = table[(table["task"] == "video") & table["metric"].str.fullmatch(r"pm\d+")].copy()
    if rows.empty:
        return _none("Accuracy across time (pm-k)", "video")
    rows["k"] = rows["metric"].str[2:].astype(int)
    rows["set"] = rows["condition_json"].map(lambda c: json.loads(c)["set"])
    sets, labels = list(dict.fromkeys(rows["set"])), list(dict.fromkeys(rows["label"]))
    palette = dict(zip(labels, sns.color_palette("colorblind", len(labels))))
    markers = dict(zip(labels, "osD^vP*X" * (1 + len(labels) // 8)))
    fig, axes = plt.subplots(
        1, len(sets), figsize=(4.4 * len(sets) + 2.2, 3.6), squeeze=False, sharey=True
    )
    for ax, name in zip(axes[0], sets):
        for label in labels:
            mine = rows[(rows["set"] == name) & (rows["label"] == label)]
            mine = mine.groupby("k")["value"].mean().sort_index()
            ax.plot(
                mine.index,
                mine.values,
                marker=markers[label],
                markerfacecolor="none",
                color=palette[label],
                label=label,
            )
        ax.set_title(name, fontsize="medium")
        ax.set_xlabel("k (frames either side of the anchor)")
    axes[0][0].set_ylabel("pm-k (% of anchors)")
    axes[0][0].set_ylim(-3, 103)
    axes[0][-1].legend(
        loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize="small", title="model"
    )
    anchors = sorted({int(v) for v in rows["n_images"].dropna()})
    fig.suptitle("Accuracy across time: an anchor counts only if every frame within k is right")
    notes = [f"{'/'.join(map(str, anchors))} anchors; k = 0: the anchors' accuracy"]
    fig.tight_layout()
    _add_notes(fig, notes)
    return fig, notes


FIGURES = {"video_pmk": video_pmk}
