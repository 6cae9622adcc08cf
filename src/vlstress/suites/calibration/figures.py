"""Figures of the calibration suite from the summary: calibration_ece, the ECE of every set before
and after temperature scaling, one panel per model, horizontal bars (set names stay readable); a
panel's title gives the model's T and flags a T on the search bound or one that worsens the
held-out ID NLL (the reliability diagrams are drawn by `vlstress calibrate`: `reliability`). Each
set's label gives its n images; given the headline table, each bar carries its 95% BCa bootstrap
interval over the images, and a note says which bars have none and why."""

from __future__ import annotations

import pandas as pd
import seaborn as sns

from vlstress.report.figures import (
    FigureResult,
    _add_notes,
    _tick,
    bar_intervals,
    interval_note,
    model_panels,
)
from vlstress.report.figures import metric_rows as _rows
from vlstress.report.figures import no_records as _none
from vlstress.report.headlines import interval_bounds
from vlstress.suites.calibration.bounds import fit_flags


def _set_label(condition: dict) -> str:
    name = str(condition.get("set", "?"))
    if "corruption" in condition:
        return f"{name}: {condition['corruption']} s{condition.get('severity')}"
    if "attack" in condition:
        return f"{name}: {condition['attack']}"
    if condition.get("split"):
        return f"{name} ({condition['split']}, ID)"
    return name


def _title(label: str, temperature: float | None, bound: bool, worse: bool) -> str:
    """A panel's title: the model, its T and what is wrong with the fit, if anything."""
    lines = [_tick(label)]
    if temperature is not None:
        lines.append(f"T = {temperature:.3g}")
    if bound:
        lines.append("T on the search bound [0.01, 100]")
    if worse:
        lines.append("T worsens the held-out ID NLL")
    return "\n".join(lines)


SCALINGS = {"ece": "raw logits", "ece_ts": "temperature-scaled (T from ID)"}


def calibration_ece(table: pd.DataFrame, headlines: pd.DataFrame | None = None) -> FigureResult:
    rows = _rows(table, "calibration", ["ece", "ece_ts"])
    if rows.empty:
        return _none("Calibration before and after temperature scaling", "calibration")
    calibration = table[table["task"] == "calibration"]
    flags = fit_flags(calibration)
    temperatures = calibration[calibration["metric"] == "temperature"].groupby("label")["value"]
    temperature = temperatures.mean().to_dict()
    rows["set"] = rows["condition_dict"].map(_set_label)
    sizes = rows.groupby("set", sort=False)["n_images"].agg(
        lambda n: "/".join(str(int(v)) for v in sorted(set(n.dropna())))
    )
    rows["set"] = rows["set"].map(lambda s: f"{s}, n = {sizes[s]}" if sizes[s] else s)
    rows["scaling"] = rows["metric"].map(SCALINGS)
    labels = list(dict.fromkeys(rows["label"]))
    models = dict(zip(rows["label"], rows["model"]))
    sets = list(dict.fromkeys(rows["set"]))
    drawn = 0
    bounds = interval_bounds(rows, headlines, ["label", "set", "scaling"])
    fig, axes, firsts, lasts = model_panels(
        len(labels), 3.6, max(2.8, 0.42 * len(sets) + 1.6), extra_width=2.6
    )
    for ax, label in zip(axes, labels):
        sns.barplot(
            data=rows[rows["label"] == label],
            y="set",
            x="value",
            hue="scaling",
            order=sets,
            hue_order=list(SCALINGS.values()),
            orient="h",
            ax=ax,
            errorbar=None,
            palette="colorblind",
        )
        mine = {key[1:]: found for key, found in bounds.items() if key[0] == label}
        drawn += bar_intervals(ax, mine, sets, list(SCALINGS.values()), orient="h")
        bound, worse = flags.get(str(models[label]), (False, False))
        ax.set_title(
            _title(label, temperature.get(label), bound, worse),
            fontsize="small",
            color="firebrick" if bound or worse else "black",
        )
        ax.set_ylabel("")
        ax.set_xlabel("ECE (%, 15 bins)")
        ax.tick_params(axis="y", labelsize="small")
        ax.legend_.remove()
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
    notes = [
        fit_note(calibration),
        N_NOTE + interval_note(METHOD, drawn, len(rows)) if headlines is not None else NO_INTERVAL,
    ]
    fig.tight_layout()
    _add_notes(fig, notes)
    return fig, notes


N_NOTE = "n: the images of each set (on its label); "
NO_INTERVAL = (
    "n: the images of each set (on its label); no interval: ECE is not a share of images, and the "
    "bars are point estimates, so a small difference between two bars may be noise"
)


METHOD = "95% seeded BCa bootstrap interval over the images"


def fit_note(calibration: pd.DataFrame) -> str:
    """How many held-out in-distribution images each model's T was fitted on (`n_fit`)."""
    fitted = calibration.loc[calibration["metric"] == "n_fit", "value"].dropna()
    sizes = "/".join(str(int(v)) for v in sorted(set(fitted)))
    if not sizes:
        return "T fitted on in-distribution images (their number is not recorded)"
    return f"T fitted on n = {sizes} held-out in-distribution images per model"


FIGURES = {
    "calibration_ece": calibration_ece,
}
