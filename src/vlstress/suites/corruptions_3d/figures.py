"""The figure of the 3D Common Corruptions suite, from the long summary table:

- corruption_3d_severity: top-1 against severity (0 = the clean test set), one panel per
  corruption and one for the mean over corruptions, one line per model coloured by its image
  tower (cnn, transformer, hybrid: the question of the holistic CLIP paper is whether CNN towers
  hold up better), a 95% Wilson band over the n images around each measured line, chance dashed.
"""

from __future__ import annotations

import json

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.lines import Line2D

from vlstress.report.figures import (
    CHANCE_STYLE,
    TOWER_ORDER,
    WILSON_BAND_NOTE,
    FigureResult,
    _add_notes,
    chance_levels,
    chance_line,
    sample_note,
    tower_colours,
    wilson_band,
)
from vlstress.report.figures import no_records as _none
from vlstress.report.figures import task_rows as _task
from vlstress.suites.corruptions_3d.towers import towers

TASK = "corruption_3d"  # paths.TASK, written out: a report step imports no suite path module
MEAN = "mean over corruptions"
MODEL_MARKERS = ("o", "s", "D", "^", "v", "P", "X", "<", ">", "h")
PANELS_PER_ROW = 4


def curves(data: pd.DataFrame, clean: pd.DataFrame) -> pd.DataFrame:
    """One row per (label, corruption, severity): top-1 (mean over replicates) and n images;
    severity 0 is the clean test set, copied into every corruption's curve."""
    rows = data.assign(n=pd.to_numeric(data.get("n_images"), errors="coerce"))
    points = (
        rows.groupby(["label", "corruption", "severity"], sort=False)
        .agg(value=("value", "mean"), n=("n", "max"))
        .reset_index()
    )
    base = (
        clean.assign(n=pd.to_numeric(clean.get("n_images"), errors="coerce"))
        .groupby("label", sort=False)
        .agg(value=("value", "mean"), n=("n", "max"))
        .reset_index()
    )
    corruptions = list(dict.fromkeys(data["corruption"]))
    zero = pd.concat(
        [base.assign(corruption=c, severity=0) for c in corruptions], ignore_index=True
    )
    return pd.concat([zero, points], ignore_index=True).astype({"severity": int})


def corruption_3d_severity(table: pd.DataFrame) -> FigureResult:
    data = _task(table, TASK)
    if data.empty:
        return _none("Accuracy under 3D common corruptions", "corruptions_3d")
    clean = _task(table, TASK, "top1_clean")
    points = curves(data, clean)
    labels = list(dict.fromkeys(data["label"]))
    corruptions = list(dict.fromkeys(data["corruption"]))
    tower_of = towers(data)
    kinds = [t for t in TOWER_ORDER if t in tower_of.values()]  # the engine's order and colours
    palette = tower_colours()
    markers = {label: MODEL_MARKERS[i % len(MODEL_MARKERS)] for i, label in enumerate(labels)}
    panels = [*corruptions, MEAN]
    columns = min(PANELS_PER_ROW, len(panels))
    rows_n = -(-len(panels) // columns)
    fig, axes = plt.subplots(
        rows_n, columns, figsize=(3.4 * columns + 2.6, 3.2 * rows_n), sharey=True, squeeze=False
    )
    chance = set(chance_levels(data).values())
    banded = False
    for ax, panel in zip(axes.flat, panels):
        for label in labels:
            mine = points[points["label"] == label]
            if panel == MEAN:  # the same images at every corruption: no band
                mine = mine.groupby("severity", as_index=False)["value"].mean()
            else:
                mine = mine[mine["corruption"] == panel]
            mine = mine.sort_values("severity")
            color = palette[tower_of[label]]
            if panel != MEAN:
                banded |= wilson_band(ax, mine["severity"], mine["value"], mine["n"], color)
            ax.plot(mine["severity"], mine["value"], color=color, marker=markers[label], lw=1.4)
        if len(chance) == 1:
            chance_line(ax, next(iter(chance)), label=None)
        ax.set_title(panel.replace("_", " "), fontsize="medium")
        ax.set_xlabel("severity (0 = clean)")
        ax.set_xticks(sorted(points["severity"].unique()))
        ax.set_ylim(0, 100)
    for ax in axes.flat[len(panels) :]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel("top-1 accuracy (%)")
    handles = [Line2D([], [], color=palette[t], lw=2, label=f"{t} tower") for t in kinds] + [
        Line2D([], [], color="0.3", marker=markers[m], linestyle="none", label=m) for m in labels
    ]
    if len(chance) == 1:
        handles.append(Line2D([], [], label=f"chance {next(iter(chance)):.3g}%", **CHANCE_STYLE))
    axes[0, -1].legend(
        handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False,
        fontsize="small",
    )  # fmt: skip
    depth = sorted({str(d) for d in data["condition_json"].map(_depth) if d})
    fig.suptitle("Top-1 accuracy under 3D common corruptions")
    notes = [
        sample_note(data),
        "colour: the model's image tower; marker: the model; severity 0: the clean test set",
        (WILSON_BAND_NOTE if banded else "no band drawn: n unknown")
        + "; the mean over corruptions re-uses the same images: no band",
        *([f"depth: {'; '.join(depth)}"] if depth else []),
    ]
    fig.tight_layout()
    _add_notes(fig, notes)
    return fig, notes


def _depth(condition_json: str) -> str | None:
    return json.loads(condition_json).get("depth")


FIGURES = {"corruption_3d_severity": corruption_3d_severity}
