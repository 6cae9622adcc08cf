"""The assistant suite's figure: multiple_choice, one panel per test set, one bar per model
(assistants first), split into the questions answered right, answered wrong, and (assistants only)
answered with no single option (unparseable); chance (1 / options) as a dashed line; the 95%
Wilson interval of the accuracy over the n questions as an error bar at the end of the "right"
part."""

from __future__ import annotations

import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.artist import Artist
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from vlstress.embedding.kinds import model_kind
from vlstress.report.figures import FigureResult, _add_notes
from vlstress.report.figures import metric_rows as _rows
from vlstress.report.figures import no_records as _none
from vlstress.report.intervals import wilson_percent
from vlstress.suites.assistant.names import KINDS, TASK

PARTS = (  # (metric or None for the rest, legend, colour, hatch)
    ("accuracy", "right", "#0173b2", None),
    (None, "wrong", "#de8f05", None),
    ("unparseable", "unparseable (no single option named)", "0.8", "///"),
)


def multiple_choice(table: pd.DataFrame) -> FigureResult:
    rows = _rows(table, TASK, ["accuracy", "unparseable", "n_questions"])
    if rows.empty:
        return _none("Multiple-choice questions", "assistant")
    means = rows.groupby(["dataset", "label", "metric"], sort=False)["value"].mean()
    asked = questions(rows)
    arch = rows.drop_duplicates("label").set_index("label")["arch"]
    labels = list(dict.fromkeys(rows["label"]))
    labels.sort(key=lambda m: model_kind(arch[m]) != "llava")  # assistants on top
    datasets = list(dict.fromkeys(rows["dataset"]))
    fig, axes = plt.subplots(
        1,
        len(datasets),
        figsize=(4.2 * len(datasets) + 1.4, 0.42 * len(labels) + 2.0),
        squeeze=False,
        sharey=True,
    )
    y = np.arange(len(labels))
    for ax, dataset in zip(axes[0], datasets):
        right = np.array([means.get((dataset, m, "accuracy"), np.nan) for m in labels])
        lost = np.array([means.get((dataset, m, "unparseable"), 0.0) for m in labels])
        for (metric, legend, colour, hatch), width, left in (
            (PARTS[0], right, 0 * right),
            (PARTS[1], 100 - right - lost, right),
            (PARTS[2], lost, 100 - lost),
        ):
            ax.barh(y, width, left=left, color=colour, hatch=hatch, edgecolor="white", height=0.7)
        n = np.array([asked.get((dataset, m), np.nan) for m in labels])
        lo, hi = wilson_percent(right, n)
        ok = np.isfinite(lo)
        ax.errorbar(  # in the bar's lower half: clear of the value written in its upper half
            right[ok],
            y[ok] + 0.2,
            xerr=[np.maximum(right - lo, 0)[ok], np.maximum(hi - right, 0)[ok]],
            fmt="none",
            ecolor="0.15",
            elinewidth=1.0,
            capsize=2.0,
            zorder=3,
        )
        for yi, value in zip(y, right):  # at the bar's start: clear of the chance line
            if np.isfinite(value):
                colour = "white" if value >= 10 else "0.1"
                ax.text(
                    1.5, yi - 0.12, f"{value:.0f} %", va="center", color=colour, fontsize="x-small"
                )
        options = {
            json.loads(c)["options"] for c in rows.loc[rows["dataset"] == dataset, "condition_json"]
        }
        for k in sorted(options):
            ax.axvline(100 / k, color="0.2", linestyle="--", linewidth=1.0)
        ax.set_xlim(0, 100)
        ax.set_xlabel("% of questions")
        sizes = "/".join(str(round(v)) for v in sorted(set(n[np.isfinite(n)])))
        ax.set_title(f"{dataset} (n = {sizes or '?'} questions)", fontsize="medium")
        ax.grid(axis="y", visible=False)
    axes[0][0].set_yticks(y, [f"{m}\n[{KINDS[model_kind(arch[m])]}]" for m in labels])
    axes[0][0].set_ylim(len(labels) - 0.5, -0.5)
    handles: list[Artist] = [
        Patch(facecolor=c, hatch=h, edgecolor="white", label=t) for _, t, c, h in PARTS
    ]
    handles.append(Line2D([], [], color="0.2", linestyle="--", label="chance (1 / options)"))
    fig.legend(
        handles=handles,
        loc="lower center",
        bbox_to_anchor=(0.5, -0.02),
        ncol=2,
        frameon=False,
        fontsize="small",
    )
    sources = sorted({json.loads(c)["options_from"] for c in rows["condition_json"]})
    fig.suptitle(
        "Multiple choice among the true class and the top confusions of " + ", ".join(sources),
        fontsize="medium",
    )
    counts = sorted({round(v) for v in asked.dropna()})
    notes = [
        f"n = {'/'.join(map(str, counts))} questions a test set; the same options for every model",
        "error bars: 95% Wilson interval of the accuracy over the n questions",
    ]
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    _add_notes(fig, notes)
    return fig, notes


def questions(rows: pd.DataFrame) -> pd.Series:
    """How many questions each (test set, model) accuracy is a share of: the records'
    `n_questions` (mean over replicates), else the test set's `n_images`."""
    asked = rows[rows["metric"] == "n_questions"].groupby(["dataset", "label"], sort=False)["value"]
    images = rows.groupby(["dataset", "label"], sort=False)["n_images"].mean()
    return asked.mean().reindex(images.index).fillna(images)


FIGURES = {"multiple_choice": multiple_choice}
