"""The stability suite's figure: flip probability and top-5 distance per perturbation, one bar per
model (noise perturbations first: frame 0 vs each; then the motion ones: consecutive frames). A
value of 0 has no bar: it is drawn as a short line on the axis in the model's colour, labelled 0.
n (sequences per perturbation) is in the title; given the headline table, a flip probability
carries its 95% BCa bootstrap interval over the sequences (none under 10 sequences); the top-5
distance has none. A note says which."""

from __future__ import annotations

import json

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from vlstress.report.figures import FigureResult, _add_notes, bar_intervals, interval_note
from vlstress.report.figures import no_records as _none
from vlstress.report.headlines import interval_bounds
from vlstress.suites.stability.table import NO_INTERVAL
from vlstress.suites.stability.table import order as table_order

PANELS = (("flip_probability", "flip probability (%)"), ("top5_distance", "top-5 distance"))


def _mark_zeros(ax) -> list[float]:
    """A bar of height 0 is invisible: draw a short line on the axis in the bar's colour and
    label it 0. The x centres of the marked bars."""
    marked = []
    for container in ax.containers:
        for bar in container:
            if bar.get_height() != 0:  # NaN (no record) stays empty
                continue
            left, width = bar.get_x(), bar.get_width()
            ax.plot(
                [left, left + width],
                [0, 0],
                color=bar.get_facecolor(),
                linewidth=3,
                solid_capstyle="butt",
                clip_on=False,
                zorder=3,
            )
            ax.annotate(
                "0",
                (left + width / 2, 0),
                xytext=(0, 2),
                textcoords="offset points",
                ha="center",
                va="bottom",
                fontsize="xx-small",
            )
            marked.append(left + width / 2)
    return marked


FP_METHOD = "95% seeded BCa bootstrap interval of a flip probability over its sequences"


def stability(table: pd.DataFrame, headlines: pd.DataFrame | None = None) -> FigureResult:
    rows = table[(table["task"] == "stability") & table["metric"].isin([m for m, _ in PANELS])]
    if rows.empty:
        return _none("Stability under perturbation sequences", "stability")
    rows = rows.assign(
        perturbation=rows["condition_json"].map(lambda c: json.loads(c)["perturbation"])
    )
    order = table_order(rows["perturbation"])
    labels = list(dict.fromkeys(rows["label"]))
    palette = dict(zip(labels, sns.color_palette("colorblind", len(labels))))
    fig, axes = plt.subplots(1, 2, figsize=(max(7.0, 1.1 * len(order) + 4.5), 3.8))
    drawn = 0
    for ax, (metric, title) in zip(axes, PANELS):
        mine = rows[rows["metric"] == metric]
        sns.barplot(
            data=mine,
            x="perturbation",
            y="value",
            hue="label",
            order=order,
            hue_order=labels,
            palette=palette,
            errorbar=None,
            ax=ax,
        )
        _mark_zeros(ax)
        if metric == "flip_probability":
            bounds = interval_bounds(mine, headlines, ["perturbation", "label"])
            drawn = bar_intervals(ax, bounds, order, labels)
        ax.set_xlabel("")
        ax.set_ylabel(title)
        ax.tick_params(axis="x", rotation=35)
        for tick in ax.get_xticklabels():
            tick.set_horizontalalignment("right")
        ax.get_legend().remove()
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(
        handles,
        names,
        loc="upper center",
        bbox_to_anchor=(0.5, 0.0),
        ncol=min(3, len(labels)),
        frameon=False,
        fontsize="small",
    )
    sizes = sorted({int(v) for v in rows["n_images"].dropna()})
    clean = sorted({str(name).split("-p-")[0] for name in rows["dataset"]})
    n = "/".join(map(str, sizes)) or "unknown"
    fig.suptitle(
        f"Stability under perturbation sequences ({', '.join(clean)}; n = {n} sequences each)"
    )
    notes = [
        f"n = {n} sequences per perturbation; noise: each frame against the clean first frame; "
        "others: consecutive frames (ImageNet-P)",
        *(
            [interval_note(FP_METHOD, drawn, int((rows["metric"] == "flip_probability").sum()))]
            if headlines is not None
            else []
        ),
        NO_INTERVAL,
    ]
    fig.tight_layout()
    _add_notes(fig, notes, y=-0.08 - 0.05 * ((len(labels) + 2) // 3))
    return fig, notes


FIGURES = {"stability": stability}  # drawn by the suite's report stage (stability-report)
