"""Figures of the calibration suite from the summary: calibration_ece, the ECE of every set before
and after temperature scaling, one panel per model (the reliability diagrams are drawn by
`vlstress calibrate`: `reliability`)."""

from __future__ import annotations

import pandas as pd
import seaborn as sns

from vlstress.report.figures import FigureResult, _tick, model_panels
from vlstress.report.figures import metric_rows as _rows
from vlstress.report.figures import no_records as _none


def _set_label(condition: dict) -> str:
    name = str(condition.get("set", "?"))
    if "corruption" in condition:
        return f"{name}: {condition['corruption']} s{condition.get('severity')}"
    if "attack" in condition:
        return f"{name}: {condition['attack']}"
    if condition.get("split"):
        return f"{name} ({condition['split']}, ID)"
    return name


def calibration_ece(table: pd.DataFrame) -> FigureResult:
    rows = _rows(table, "calibration", ["ece", "ece_ts"])
    if rows.empty:
        return _none("Calibration before and after temperature scaling", "calibration")
    rows["set"] = rows["condition_dict"].map(_set_label)
    rows["scaling"] = rows["metric"].map(
        {"ece": "raw logits", "ece_ts": "temperature-scaled (T from ID)"}
    )
    labels = list(dict.fromkeys(rows["label"]))
    sets = list(dict.fromkeys(rows["set"]))
    fig, axes, firsts, lasts = model_panels(
        len(labels), max(4.5, 0.55 * len(sets) + 2.0), 4.4, extra_width=2.6
    )
    for ax, label in zip(axes, labels):
        sns.barplot(
            data=rows[rows["label"] == label],
            x="set",
            y="value",
            hue="scaling",
            order=sets,
            ax=ax,
            errorbar=None,
            palette="colorblind",
        )
        ax.set_title(_tick(label), fontsize="medium")
        ax.set_xlabel("")
        ax.tick_params(axis="x", labelrotation=60, labelsize="x-small")
        ax.legend_.remove()
    for ax in firsts:
        ax.set_ylabel("ECE (%, 15 bins)")
    handles, names = axes[0].get_legend_handles_labels()
    lasts[0].legend(
        handles,
        names,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        frameon=False,
        fontsize="small",
    )
    fig.suptitle("Expected calibration error of the zero-shot softmax")
    fig.tight_layout()
    return fig, []


FIGURES = {
    "calibration_ece": calibration_ece,
}
