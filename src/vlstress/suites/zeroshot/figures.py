"""Figures of the zero-shot suites, from the long summary table (`summary.csv`).

- zeroshot_accuracy: top-1 of every model on every test set;
- corruption_heatmap: top-1 per (corruption, severity), one panel per model;
- corruption_severity: top-1 against severity, one line per corruption (severity 0 = clean);
- typographic_attack: clean and attacked top-1 and the attack success rate per model.
A suite without records gives a placeholder that says so (never invented data).
"""

from __future__ import annotations

import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from vlstress.report.figures import FigureResult, _add_notes, _dataset, _tick, placeholder


def _task(table: pd.DataFrame, task: str, metric: str = "top1") -> pd.DataFrame:
    rows = table[(table["task"] == task) & (table["metric"] == metric)].copy()
    conditions = rows["condition_json"].map(json.loads)
    for key in ("corruption", "severity"):
        rows[key] = conditions.map(lambda c, key=key: c.get(key))
    return rows


def _clean_name(data: pd.DataFrame) -> str:
    """The clean test set a derived one comes from (`objects-c-fog` -> `objects`)."""
    return ", ".join(sorted({str(name).split("-c-")[0] for name in data["dataset"]}))


def _none(title: str, suite: str) -> FigureResult:
    reason = f"no {suite} records: the suite is off or its steps have not run"
    return placeholder(title, reason), [reason]


def zeroshot_accuracy(table: pd.DataFrame) -> FigureResult:
    data = _task(table, "zeroshot")
    if data.empty:
        return _none("Zero-shot top-1 accuracy", "zeroshot")
    fig, ax = plt.subplots(figsize=(max(5.0, 1.4 * data["dataset"].nunique() * data["label"].nunique()), 3.8))
    sns.barplot(data=data, x="dataset", y="value", hue="label", ax=ax, errorbar=None, palette="colorblind")
    chance = data.drop_duplicates("dataset")
    ax.set_xlabel("test set")
    ax.set_ylabel("top-1 accuracy (%)")
    ax.set_title("Zero-shot top-1 accuracy")
    sns.move_legend(ax, "upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, title=None)
    notes = [f"{len(chance)} test set(s): {', '.join(chance['dataset'])}"]
    fig.tight_layout()
    _add_notes(fig, notes)
    return fig, notes


def corruption_heatmap(table: pd.DataFrame) -> FigureResult:
    data = _task(table, "corruption")
    if data.empty:
        return _none("Accuracy under corruptions", "corruption")
    labels = list(dict.fromkeys(data["label"]))
    corruptions = list(dict.fromkeys(data["corruption"]))
    severities = sorted(data["severity"].unique())
    fig, axes = plt.subplots(1, len(labels), figsize=(1.2 + 0.9 * len(severities) * len(labels) + 1.5 * len(labels), 0.5 * len(corruptions) + 1.8), squeeze=False)
    vmax = max(1.0, float(data["value"].max()))
    for ax, label in zip(axes[0], labels):
        grid = data[data["label"] == label].pivot_table(index="corruption", columns="severity", values="value", aggfunc="mean")
        grid = grid.reindex(index=corruptions, columns=severities)
        sns.heatmap(grid, ax=ax, annot=True, fmt=".1f", cmap="viridis", vmin=0, vmax=vmax, cbar=ax is axes[0][-1],
                    cbar_kws={"label": "top-1 (%)"})  # fmt: skip
        ax.set_title(_tick(label), fontsize="medium")
        ax.set_xlabel("severity")
        ax.set_ylabel("corruption" if ax is axes[0][0] else "")
    fig.suptitle(f"Top-1 accuracy under corruptions ({_clean_name(data)})")
    fig.tight_layout()
    return fig, []


def corruption_severity(table: pd.DataFrame) -> FigureResult:
    data = _task(table, "corruption")
    if data.empty:
        return _none("Accuracy against severity", "corruption")
    clean = _task(table, "corruption", "top1_clean")
    labels = list(dict.fromkeys(data["label"]))
    fig, axes = plt.subplots(1, len(labels), figsize=(4.2 * len(labels) + 1.6, 3.6), squeeze=False, sharey=True)
    palette = dict(zip(dict.fromkeys(data["corruption"]), sns.color_palette("colorblind", data["corruption"].nunique())))
    for ax, label in zip(axes[0], labels):
        rows = data[data["label"] == label]
        clean_value = clean.loc[clean["label"] == label, "value"]
        for name, group in rows.groupby("corruption", sort=False):
            group = group.sort_values("severity")
            x = [0, *group["severity"]] if len(clean_value) else list(group["severity"])
            y = [float(clean_value.iloc[0]), *group["value"]] if len(clean_value) else list(group["value"])
            ax.plot(x, y, marker="o", label=name, color=palette[name])
        ax.set_title(_tick(label), fontsize="medium")
        ax.set_xlabel("severity (0 = clean)")
        ax.set_xticks(range(0, 6))
    axes[0][0].set_ylabel("top-1 accuracy (%)")
    axes[0][-1].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize="small")
    fig.suptitle(f"Top-1 accuracy against corruption severity ({_clean_name(data)})")
    fig.tight_layout()
    return fig, []


def typographic_attack(table: pd.DataFrame) -> FigureResult:
    rows = table[(table["task"] == "typographic") & table["metric"].isin(["top1_clean", "top1", "attack_success"])]
    if rows.empty:
        return _none("Typographic attack", "typographic")
    names = {"top1_clean": "top-1, clean", "top1": "top-1, attacked", "attack_success": "attack success (pred. = written class)"}
    data = rows.assign(measure=rows["metric"].map(names))
    fig, ax = plt.subplots(figsize=(max(5.0, 2.0 * data["label"].nunique()) + 2.5, 3.8))
    sns.barplot(data=data, x="label", y="value", hue="measure", hue_order=list(names.values()), ax=ax, errorbar=None, palette="colorblind")
    ax.set_xticks(ax.get_xticks())
    ax.set_xticklabels([_tick(t.get_text()) for t in ax.get_xticklabels()], fontsize="small")
    ax.set_xlabel("")
    ax.set_ylabel("%")
    ax.set_ylim(0, max(100.0, float(np.nanmax(data["value"])) + 5))
    ax.set_title(f"Typographic attack ({_dataset(data)})")
    sns.move_legend(ax, "upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, title=None)
    fig.tight_layout()
    return fig, []


ZEROSHOT_FIGURES = {
    "zeroshot_accuracy": zeroshot_accuracy,
    "corruption_heatmap": corruption_heatmap,
    "corruption_severity": corruption_severity,
    "typographic_attack": typographic_attack,
}
