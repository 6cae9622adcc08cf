"""Figures of the prompts suite from the summary:
- prompt_count: zero-shot top-1, ECE and OOD AUROC (MCM) against the number of templates (log2
  axis), the mean over the seeded subsets as a line and mean +- one std as a band, per model (and
  test set / OOD pair);
- autoclip_gain: top-1 with averaged templates, with the mean template cosine (AutoCLIP's scoring
  at uniform weights) and with AutoCLIP's per-image weights on every zero-shot set (horizontal
  bars), AutoCLIP's gain over averaged templates beside each set, one panel per model.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns
from matplotlib.lines import Line2D

from vlstress.report.figures import (
    FigureResult,
    _add_notes,
    _tick,
    identical_note,
    identical_series,
    model_panels,
    sample_note,
)
from vlstress.report.figures import metric_rows as _rows
from vlstress.report.figures import no_records as _none

MODEL_MARKERS = ("o", "s", "D", "^", "v", "P", "X", "<", ">", "h")
SHIFT = 0.05  # log2 units between two models' points

PANELS = (
    ("prompt_count", "top1", "zero-shot top-1 (%)"),
    ("prompt_count", "ece", "ECE (%)"),
    ("prompt_count_ood", "auroc", "OOD AUROC, MCM (%)"),
)


def set_label(condition: dict) -> str:
    """A zero-shot evaluation's condition as a short name (`objects: fog s5`)."""
    name = str(condition.get("set", "?"))
    if "corruption" in condition:
        return f"{name}: {condition['corruption']} s{condition.get('severity')}"
    if "attack" in condition:
        return f"{name}: {condition['attack']}"
    return name


def _curves(table: pd.DataFrame, task: str, metric: str) -> pd.DataFrame:
    """Mean and std over the seeds of one metric, per (model, line, templates)."""
    rows = _rows(table, task, [metric])
    if rows.empty:
        return rows
    conditions = rows["condition_dict"]
    rows["templates"] = conditions.map(lambda c: int(c["templates"]))
    rows["line"] = conditions.map(
        lambda c: f"{c['set']} vs {c['ood']}" if "ood" in c else str(c["set"])
    )
    grouped = rows.groupby(["label", "line", "templates"], sort=False)["value"]
    return grouped.agg(mean="mean", std="std").reset_index().fillna({"std": 0.0})


def prompt_count(table: pd.DataFrame) -> FigureResult:
    panels = [(y, _curves(table, t, m)) for t, m, y in PANELS]
    panels = [(y, data) for y, data in panels if not data.empty]
    if not panels:
        return _none("Zero-shot metrics against the number of prompt templates", "prompts")
    labels = list(dict.fromkeys(label for _, data in panels for label in data["label"]))
    colours = dict(zip(labels, sns.color_palette("colorblind", len(labels))))
    styles = ("-", "--", ":", "-.")
    counts = sorted({int(k) for _, data in panels for k in data["templates"]})
    markers = {label: MODEL_MARKERS[i % len(MODEL_MARKERS)] for i, label in enumerate(labels)}
    # models side by side around each count (a factor of 2 ** ±SHIFT on the log2 axis), so that
    # models with the same values do not hide each other
    shift = {label: 2 ** (SHIFT * (i - (len(labels) - 1) / 2)) for i, label in enumerate(labels)}
    identical = identical_series(
        pd.concat(
            [
                data.assign(point=list(zip([y] * len(data), data["line"], data["templates"])))
                for y, data in panels
            ]
        ).rename(columns={"mean": "value"})
    )
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels) + 2.6, 3.9), squeeze=False)
    several = False
    for ax, (ylabel, data) in zip(axes[0], panels):
        lines = list(dict.fromkeys(data["line"]))
        several |= len(lines) > 1
        for (label, line), group in data.groupby(["label", "line"], sort=False):
            group = group.sort_values("templates")
            style = styles[lines.index(line) % len(styles)]
            ax.plot(
                group["templates"] * shift[label],
                group["mean"],
                marker=markers[label],
                color=colours[label],
                linestyle=style,
                label=f"{label}: {line}",
            )
            ax.fill_between(
                group["templates"] * shift[label],
                group["mean"] - group["std"],
                group["mean"] + group["std"],
                color=colours[label],
                alpha=0.2,
                linewidth=0,
            )
        ax.set_xscale("log", base=2)
        ax.set_xticks(counts)
        ax.set_xticklabels([str(c) for c in counts])
        ax.minorticks_off()
        ax.set_xlabel("prompt templates")
        ax.set_ylabel(ylabel)
        ax.set_title(", ".join(lines), fontsize="small")
    if several:  # every (model, set) line named
        handles, names = [], []
        for ax in axes[0]:
            for handle, name in zip(*ax.get_legend_handles_labels()):
                if name not in names:
                    handles.append(handle)
                    names.append(name)
    else:  # one line per model in each panel: the panel titles name the sets
        handles = [Line2D([], [], color=colours[label], marker=markers[label]) for label in labels]
        names = [_tick(label) for label in labels]
    axes[0][-1].legend(
        handles,
        names,
        loc="upper left",
        bbox_to_anchor=(1.02, 1.0),
        frameon=False,
        fontsize="small",
    )
    fig.suptitle(
        "Zero-shot metrics against the number of prompt templates (band: ±1 std over subsets)"
    )
    notes = [
        *identical_note(identical),
        f"models drawn side by side (each count × 2^±{SHIFT * (len(labels) - 1) / 2:.2g})",
        sample_note(_rows(table, "prompt_count", ["top1"])),
    ]
    fig.tight_layout()
    _add_notes(fig, notes)
    return fig, notes


def autoclip_gain(table: pd.DataFrame) -> FigureResult:
    """One panel per model: horizontal bars of top-1 per set and method (the set names read
    horizontally), and AutoCLIP's gain over averaged templates (pp) written beside each set."""
    methods = {
        "top1_average": "averaged templates",
        "top1_uniform": "mean template cosine (uniform weights)",
        "top1_autoclip": "AutoCLIP (per-image weights)",
    }
    rows = _rows(table, "autoclip", [*methods, "gain"])
    if rows.empty or not rows["metric"].isin(list(methods)).any():
        return _none("AutoCLIP against template averaging", "prompts")
    rows["set"] = rows["condition_dict"].map(set_label)
    rows["kind"] = rows["condition_dict"].map(
        lambda c: 2 if "attack" in c else 1 if "corruption" in c else 0
    )
    gains = rows[rows["metric"] == "gain"].groupby(["label", "set"])["value"].mean()
    rows = rows[rows["metric"].isin(list(methods))].copy()
    rows["method"] = rows["metric"].map(methods)
    labels = list(dict.fromkeys(rows["label"]))
    # clean sets first, then the corrupted copies, then the attacked ones
    sets = list(dict.fromkeys(rows.sort_values("kind", kind="stable")["set"]))
    fig, axes, firsts, lasts = model_panels(
        len(labels), 4.6, 0.55 * len(sets) + 1.4, extra_width=3.2
    )
    for ax, label in zip(axes, labels):
        sns.barplot(
            data=rows[rows["label"] == label],
            y="set",
            x="value",
            hue="method",
            order=sets,
            hue_order=[name for name in methods.values() if name in set(rows["method"])],
            ax=ax,
            errorbar=None,
            palette="colorblind",
            orient="h",
        )
        ax.set_title(_tick(label), fontsize="medium")
        ax.set_ylabel("")
        ax.set_xlabel("top-1 (%)")
        ax.set_xlim(0, 100)
        ax.tick_params(axis="y", labelsize="small")
        for i, name in enumerate(sets):
            gain = gains.get((label, name))
            if gain is not None and not pd.isna(gain):
                ax.annotate(
                    f"gain {gain:+.1f}",
                    (1.0, i),
                    xycoords=("axes fraction", "data"),
                    xytext=(-3, 0),
                    textcoords="offset points",
                    ha="right",
                    va="center",
                    fontsize="x-small",
                    color="0.2",
                )
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
    fig.suptitle("Zero-shot top-1: averaged templates vs AutoCLIP")
    notes = [
        "gain: AutoCLIP's top-1 minus the averaged templates' (percentage points)",
        sample_note(rows),
    ]
    fig.tight_layout()
    _add_notes(fig, notes)
    return fig, notes


FIGURES = {
    "prompt_count": prompt_count,
    "autoclip_gain": autoclip_gain,
}
