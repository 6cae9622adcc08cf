"""Figures of the calibration suite from the summary: calibration_ece, the ECE of every set before
and after temperature scaling, one panel per model, horizontal bars (set names stay readable); a
panel's title gives the model's T and flags a T on the search bound or one that worsens the
held-out ID NLL (the reliability diagrams are drawn by `vlstress calibrate`: `reliability`). Each
set's label gives its n images; the bars are point estimates, which a note says."""

from __future__ import annotations

import pandas as pd
import seaborn as sns

from vlstress.report.figures import FigureResult, _add_notes, _tick, model_panels
from vlstress.report.figures import metric_rows as _rows
from vlstress.report.figures import no_records as _none
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


def calibration_ece(table: pd.DataFrame) -> FigureResult:
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
    rows["scaling"] = rows["metric"].map(
        {"ece": "raw logits", "ece_ts": "temperature-scaled (T from ID)"}
    )
    labels = list(dict.fromkeys(rows["label"]))
    models = dict(zip(rows["label"], rows["model"]))
    sets = list(dict.fromkeys(rows["set"]))
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
            orient="h",
            ax=ax,
            errorbar=None,
            palette="colorblind",
        )
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
    notes = [fit_note(calibration), NO_INTERVAL]
    fig.tight_layout()
    _add_notes(fig, notes)
    return fig, notes


NO_INTERVAL = (
    "n: the images of each set (on its label); no interval: ECE is not a share of images, and the "
    "bars are point estimates, so a small difference between two bars may be noise"
)


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
