"""Figures of the prompts suite from the summary:
- prompt_count: zero-shot top-1, ECE and OOD AUROC (MCM) against the number of templates (log2
  axis), the mean over the seeded subsets as a line and mean +- one std as bars, per model (and
  test set / OOD pair); top-1, a share, in its 95% Wilson band over the n images;
- autoclip_gain: top-1 with averaged templates, with the mean template cosine (AutoCLIP's scoring
  at uniform weights) and with AutoCLIP's per-image weights on every zero-shot set (horizontal
  bars with 95% Wilson bars), AutoCLIP's gain over averaged templates beside each set (a paired
  difference on the same images: no interval drawn), one panel per model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.lines import Line2D

from vlstress.report.figures import (
    WILSON_NOTE,
    FigureResult,
    _add_notes,
    _tick,
    identical_note,
    identical_series,
    model_panels,
    sample_note,
    wilson_band,
)
from vlstress.report.figures import metric_rows as _rows
from vlstress.report.figures import no_records as _none
from vlstress.report.headlines import interval_bounds
from vlstress.report.intervals import wilson_percent

MODEL_MARKERS = ("o", "s", "D", "^", "v", "P", "X", "<", ">", "h")
SHIFT = 0.05  # log2 units between two models' points

SHARES = {"top1"}  # the panels' metrics that are shares of the images (a Wilson band each)
GAIN_NOTE = (
    "gain: AutoCLIP's top-1 minus the averaged templates' (percentage points), a paired "
    "difference on the same n images: no interval drawn"
)
GAIN_INTERVAL_NOTE = (
    "gain: AutoCLIP's top-1 minus the averaged templates' (percentage points), a paired "
    "difference on the same n images; [lo, hi]: its 95% seeded BCa bootstrap interval, both "
    "outcomes of each image resampled together (results/headlines.csv; none under 10 images)"
)

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


def _images(rows: pd.DataFrame) -> pd.Series:
    """The images behind each row (NaN where the records do not say)."""
    if "n_images" not in rows:
        return pd.Series(np.nan, index=rows.index)
    return pd.to_numeric(rows["n_images"], errors="coerce").astype("float64")


def _curves(table: pd.DataFrame, task: str, metric: str) -> pd.DataFrame:
    """Mean and std over the seeds of one metric, and the images behind it, per (model, line,
    templates)."""
    rows = _rows(table, task, [metric])
    if rows.empty:
        return rows
    conditions = rows["condition_dict"]
    rows["templates"] = conditions.map(lambda c: int(c["templates"]))
    rows["line"] = conditions.map(
        lambda c: f"{c['set']} vs {c['ood']}" if "ood" in c else str(c["set"])
    )
    rows["n"] = _images(rows)
    grouped = rows.groupby(["label", "line", "templates"], sort=False)
    curves = grouped["value"].agg(mean="mean", std="std")
    curves["n"] = grouped["n"].max()
    return curves.reset_index().fillna({"std": 0.0})


def prompt_count(table: pd.DataFrame) -> FigureResult:
    found = [(m, y, _curves(table, t, m)) for t, m, y in PANELS]
    found = [(m, y, data) for m, y, data in found if not data.empty]
    panels = [(y, data) for _, y, data in found]
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
    several = banded = False
    for ax, (metric, ylabel, data) in zip(axes[0], found):
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
            x = group["templates"] * shift[label]
            # the spread over template subsets: thin bars, so that the Wilson band stays readable
            ax.vlines(
                x,
                group["mean"] - group["std"],
                group["mean"] + group["std"],
                color=colours[label],
                linewidth=1.2,
                alpha=0.8,
            )
            if metric in SHARES:
                banded |= wilson_band(
                    ax, list(x), list(group["mean"]), list(group["n"]), colours[label], alpha=0.1
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
        "Zero-shot metrics against the number of prompt templates "
        "(bars: ±1 std over subsets; top-1 bands: 95% Wilson)"
    )
    notes = [
        *identical_note(identical),
        f"models drawn side by side (each count × 2^±{SHIFT * (len(labels) - 1) / 2:.2g})",
        sample_note(_rows(table, "prompt_count", ["top1"])),
        (
            "top-1 bands: 95% Wilson interval over the n images (the mean over subsets as a "
            "fractional count); "
            if banded
            else "no top-1 band: n unknown; "
        )
        + "ECE and AUROC are not shares of the images: no interval over images drawn",
    ]
    fig.tight_layout()
    _add_notes(fig, notes)
    return fig, notes


def autoclip_gain(table: pd.DataFrame, headlines: pd.DataFrame | None = None) -> FigureResult:
    """One panel per model: horizontal bars of top-1 per set and method (the set names read
    horizontally), and AutoCLIP's gain over averaged templates (pp) written beside each set, with
    its paired interval from the headline table where it has one."""
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
    gain_rows = rows[rows["metric"] == "gain"]
    gains = gain_rows.groupby(["label", "set"])["value"].mean()
    gain_bounds = interval_bounds(gain_rows, headlines, ["label", "set"])
    rows = rows[rows["metric"].isin(list(methods))].copy()
    rows["method"] = rows["metric"].map(methods)
    labels = list(dict.fromkeys(rows["label"]))
    # clean sets first, then the corrupted copies, then the attacked ones
    sets = list(dict.fromkeys(rows.sort_values("kind", kind="stable")["set"]))
    hue_order = [name for name in methods.values() if name in set(rows["method"])]
    fig, axes, firsts, lasts = model_panels(
        len(labels), 4.6, 0.55 * len(sets) + 1.4, extra_width=3.2
    )
    drawn = 0
    for ax, label in zip(axes, labels):
        panel = rows[rows["label"] == label]
        sns.barplot(
            data=panel,
            y="set",
            x="value",
            hue="method",
            order=sets,
            hue_order=hue_order,
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
                _, lo, hi = gain_bounds.get((label, name), (gain, np.nan, np.nan))
                # the interval on a line of its own: the text stays clear of the bars
                shown = f"\n[{lo:+.1f}, {hi:+.1f}]" if np.isfinite(lo) and np.isfinite(hi) else ""
                ax.annotate(
                    f"gain {gain:+.1f}{shown}",
                    (1.0, i),
                    xycoords=("axes fraction", "data"),
                    xytext=(-3, 0),
                    textcoords="offset points",
                    ha="right",
                    va="center",
                    fontsize="x-small",
                    color="0.2",
                )
        drawn += wilson_hbars(ax, panel, sets, hue_order)
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
        GAIN_INTERVAL_NOTE if headlines is not None else GAIN_NOTE,
        sample_note(rows),
        *([WILSON_NOTE] if drawn else ["no interval drawn: n unknown"]),
    ]
    fig.tight_layout()
    _add_notes(fig, notes)
    return fig, notes


def wilson_hbars(
    ax: Any, data: pd.DataFrame, order: Sequence[str], hue_order: Sequence[str]
) -> int:
    """95% Wilson intervals on the horizontal bars of a seaborn bar plot of top-1 (%) per `set`
    (y, `order`) and `method` (hue, `hue_order`: one container each), over each bar's
    `n_images`; replicates averaged (a fractional count). Returns how many bars got one."""
    cases = data.assign(n=_images(data)).groupby(["set", "method"], sort=False)
    means = cases["value"].mean()
    sizes = cases["n"].max()
    drawn = 0
    for container, level in zip(ax.containers, hue_order):
        for bar in container:
            centre = bar.get_y() + bar.get_height() / 2
            key = (order[round(centre)], level)  # categorical y positions are 0, 1, ...
            if key not in means.index:
                continue
            lo, hi = wilson_percent([means[key]], [sizes[key]])
            if not (np.isfinite(lo[0]) and np.isfinite(hi[0])):
                continue
            ax.errorbar(
                means[key],
                centre,
                xerr=[[max(means[key] - lo[0], 0.0)], [max(hi[0] - means[key], 0.0)]],
                fmt="none",
                ecolor="0.2",
                elinewidth=1.0,
                capsize=2.0,
                zorder=3,
            )
            drawn += 1
    return drawn


FIGURES = {
    "prompt_count": prompt_count,
    "autoclip_gain": autoclip_gain,
}
