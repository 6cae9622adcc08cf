"""Figures of the adversarial, calibration and OOD suites.

From the long summary table (registered in `vlstress.figures.FIGURES`):
- adversarial_eps: robust top-1 against eps, one line per attack, one panel per model (eps 0 = clean);
- calibration_ece: ECE of every set before and after temperature scaling, one panel per model;
- ood_auroc: AUROC of every OOD score, one panel per OOD set, bars per model.
Drawn by the steps themselves (they need more than the summary holds):
- `reliability_figure`: reliability diagrams before / after temperature scaling (vlstress calibrate);
- `roc_figure`: ROC curves of every score for one ID / OOD pair (vlstress ood-detect).
A suite without records gives a placeholder that says so (never invented data).
"""

from __future__ import annotations

import json
from typing import Sequence

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from vlstress.report.figures import FigureResult, _add_notes, _tick, placeholder
from vlstress.suites.calibration.calibration import ReliabilityBins


def _rows(table: pd.DataFrame, task: str, metrics: Sequence[str]) -> pd.DataFrame:
    rows = table[(table["task"] == task) & table["metric"].isin(list(metrics))].copy()
    rows["condition_dict"] = rows["condition_json"].map(json.loads)
    return rows


def _none(title: str, suite: str) -> FigureResult:
    reason = f"no {suite} records: the suite is off or its steps have not run"
    return placeholder(title, reason), [reason]


def adversarial_eps(table: pd.DataFrame) -> FigureResult:
    rows = _rows(table, "adversarial", ["robust_top1", "top1_clean"])
    if rows.empty:
        return _none("Robust accuracy against eps", "adversarial")
    rows["attack"] = rows["condition_dict"].map(lambda c: c.get("attack"))
    rows["eps"] = rows["condition_dict"].map(lambda c: float(c.get("eps", float("nan"))))
    labels = list(dict.fromkeys(rows["label"]))
    attacks = list(dict.fromkeys(rows["attack"]))
    palette = dict(zip(attacks, sns.color_palette("colorblind", len(attacks))))
    fig, axes = plt.subplots(1, len(labels), figsize=(4.2 * len(labels) + 1.8, 3.8), squeeze=False, sharey=True)
    for ax, label in zip(axes[0], labels):
        mine = rows[rows["label"] == label]
        for attack in attacks:
            robust = mine[(mine["attack"] == attack) & (mine["metric"] == "robust_top1")].sort_values("eps")
            clean = mine[(mine["attack"] == attack) & (mine["metric"] == "top1_clean")]
            if robust.empty:
                continue
            x, y = list(robust["eps"]), list(robust["value"])
            if len(clean) and 0.0 not in x:  # the clean accuracy of the same images is the point at eps 0
                x, y = [0.0, *x], [float(clean["value"].iloc[0]), *y]
            ax.plot(x, y, marker="o", label=attack, color=palette[attack])
        ax.set_title(_tick(label), fontsize="medium")
        ax.set_xlabel("eps (1/255 of the attack's norm)")
    axes[0][0].set_ylabel("robust top-1 (%)")
    axes[0][0].set_ylim(bottom=0)
    axes[0][-1].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize="small", title="attack")
    n_images = sorted({int(v) for v in rows["n_images"].dropna()})
    fig.suptitle(f"Zero-shot accuracy under adversarial attacks ({', '.join(sorted(set(rows['dataset'])))})")
    notes = [f"{'/'.join(map(str, n_images))} attacked images per model; eps 0 = clean accuracy of the same images"]
    fig.tight_layout()
    _add_notes(fig, notes)
    return fig, notes


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
    rows["scaling"] = rows["metric"].map({"ece": "raw logits", "ece_ts": "temperature-scaled (T from ID)"})
    labels = list(dict.fromkeys(rows["label"]))
    sets = list(dict.fromkeys(rows["set"]))
    fig, axes = plt.subplots(1, len(labels), figsize=(max(4.5, 0.55 * len(sets) + 2.0) * len(labels) + 1.0, 4.4), squeeze=False, sharey=True)
    for ax, label in zip(axes[0], labels):
        sns.barplot(data=rows[rows["label"] == label], x="set", y="value", hue="scaling", order=sets, ax=ax, errorbar=None, palette="colorblind")
        ax.set_title(_tick(label), fontsize="medium")
        ax.set_xlabel("")
        ax.tick_params(axis="x", labelrotation=60, labelsize="x-small")
        ax.legend_.remove()
    axes[0][0].set_ylabel("ECE (%, 15 bins)")
    handles, names = axes[0][0].get_legend_handles_labels()
    axes[0][-1].legend(handles, names, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize="small")
    fig.suptitle("Expected calibration error of the zero-shot softmax")
    fig.tight_layout()
    return fig, []


def ood_auroc(table: pd.DataFrame) -> FigureResult:
    rows = _rows(table, "ood", ["auroc"])
    if rows.empty:
        return _none("OOD detection AUROC", "ood")
    rows["ood"] = rows["condition_dict"].map(lambda c: c.get("ood"))
    rows["score"] = rows["condition_dict"].map(lambda c: c.get("score"))
    sets = list(dict.fromkeys(rows["ood"]))
    fig, axes = plt.subplots(1, len(sets), figsize=(max(5.0, 1.5 * rows["score"].nunique() * 1.2) * len(sets) + 2.0, 3.8), squeeze=False, sharey=True)
    for ax, name in zip(axes[0], sets):
        sns.barplot(data=rows[rows["ood"] == name], x="score", y="value", hue="label", ax=ax, errorbar=None, palette="colorblind")
        ax.axhline(50.0, color="0.4", linewidth=0.8, linestyle="--")
        ax.set_title(f"{', '.join(sorted(set(rows['dataset'])))} vs {name}", fontsize="medium")
        ax.set_xlabel("score")
        ax.set_ylim(0, 100)
        ax.legend_.remove()
    axes[0][0].set_ylabel("AUROC (%)")
    handles, names = axes[0][0].get_legend_handles_labels()
    axes[0][-1].legend(handles, [_tick(n) for n in names], loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize="small")
    fig.suptitle("Out-of-distribution detection with the zero-shot classifier (dashed: chance)")
    fig.tight_layout()
    return fig, []


HOLISTIC_FIGURES = {"adversarial_eps": adversarial_eps, "calibration_ece": calibration_ece, "ood_auroc": ood_auroc}


# ------------------------------------------------------------------ drawn by the steps


def _reliability_panel(ax, before: ReliabilityBins, after: ReliabilityBins, title: str, ece_before: float, ece_after: float) -> None:
    width = float(before.edges[1] - before.edges[0])
    centres = before.edges[:-1] + width / 2
    for bins, colour, name, value, offset in ((before, "C3", "raw", ece_before, -0.22), (after, "C0", "temperature-scaled", ece_after, 0.22)):
        filled = bins.counts > 0
        ax.bar(centres[filled] + offset * width, bins.accuracy[filled], width=0.44 * width, color=colour, alpha=0.75,
               label=f"{name} (ECE {value:.1f}%)")  # fmt: skip
    ax.plot([0, 1], [0, 1], color="0.3", linestyle="--", linewidth=1.0, label="perfect calibration")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("confidence (top-1 softmax)")
    ax.set_title(title, fontsize="medium")
    ax.legend(loc="upper left", fontsize="x-small", frameon=True)


def reliability_figure(model_label: str, temperature: float, panels: list[tuple[str, ReliabilityBins, ReliabilityBins, float, float]]) -> plt.Figure:
    """Reliability diagrams: per panel (title, bins raw, bins scaled, ECE raw %, ECE scaled %)."""
    fig, axes = plt.subplots(1, len(panels), figsize=(4.4 * len(panels), 4.2), squeeze=False, sharey=True)
    for ax, (title, before, after, ece_before, ece_after) in zip(axes[0], panels):
        _reliability_panel(ax, before, after, title, ece_before, ece_after)
    axes[0][0].set_ylabel("accuracy in bin")
    fig.suptitle(f"Reliability of {model_label}: raw logits vs T = {temperature:.3g} fitted on held-out ID images")
    fig.tight_layout()
    return fig


def roc_figure(title: str, curves: dict[str, tuple[list[float], list[float], float]]) -> plt.Figure:
    """ROC curves: score -> (FPR, TPR, AUROC %)."""
    fig, ax = plt.subplots(figsize=(4.8, 4.4))
    palette = sns.color_palette("colorblind", len(curves))
    for colour, (name, (fpr, tpr, auroc)) in zip(palette, curves.items()):
        ax.plot(fpr, tpr, color=colour, label=f"{name} (AUROC {auroc:.1f}%)")
    ax.plot([0, 1], [0, 1], color="0.4", linestyle="--", linewidth=0.8)
    ax.axhline(0.95, color="0.6", linestyle=":", linewidth=0.8)
    ax.set_xlabel("false positive rate (OOD accepted as ID)")
    ax.set_ylabel("true positive rate (ID kept)")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.01)
    ax.set_title(title, fontsize="medium")
    ax.legend(loc="lower right", fontsize="x-small")
    fig.tight_layout()
    return fig
