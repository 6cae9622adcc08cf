"""Figures of the OOD suite from the summary: ood_auroc, the AUROC of every OOD score, one panel per
OOD set, bars per model (the ROC curves of each pair are drawn by `vlstress ood-detect`: `roc`). A
panel's title gives the n in-distribution images; the bars are point estimates (a note says so)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from vlstress.report.figures import FigureResult, _add_notes, _tick, sample_note
from vlstress.report.figures import metric_rows as _rows
from vlstress.report.figures import no_records as _none


def ood_auroc(table: pd.DataFrame) -> FigureResult:
    rows = _rows(table, "ood", ["auroc"])
    if rows.empty:
        return _none("OOD detection AUROC", "ood")
    rows["ood"] = rows["condition_dict"].map(lambda c: c.get("ood"))
    rows["score"] = rows["condition_dict"].map(lambda c: c.get("score"))
    sets = list(dict.fromkeys(rows["ood"]))
    fig, axes = plt.subplots(
        1,
        len(sets),
        figsize=(max(5.0, 1.5 * rows["score"].nunique() * 1.2) * len(sets) + 2.0, 3.8),
        squeeze=False,
        sharey=True,
    )
    for ax, name in zip(axes[0], sets):
        sns.barplot(
            data=rows[rows["ood"] == name],
            x="score",
            y="value",
            hue="label",
            ax=ax,
            errorbar=None,
            palette="colorblind",
        )
        ax.axhline(50.0, color="0.4", linewidth=0.8, linestyle="--")
        mine = rows[rows["ood"] == name]
        sizes = "/".join(str(int(v)) for v in sorted(set(mine["n_images"].dropna())))
        inside = ", ".join(sorted(set(mine["dataset"].astype(str))))
        ax.set_title(f"{inside} (n = {sizes or '?'}) vs {name}", fontsize="medium")
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
    notes = [sample_note(rows, "in-distribution images"), OOD_COUNT, NO_INTERVAL]
    fig.tight_layout()
    _add_notes(fig, notes)
    return fig, notes


OOD_COUNT = "the OOD images' count is in each record (n_ood_images), not in the summary"
NO_INTERVAL = (
    "no interval: AUROC is not a share of images, and the bars are point estimates, so a small "
    "difference between two bars may be noise"
)


FIGURES = {
    "ood_auroc": ood_auroc,
}
