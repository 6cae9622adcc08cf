"""The paper's figures from the long summary table, saved reproducibly (PNG + PDF, provenance in metadata).

Registry `FIGURES`: name -> function(table) -> (figure, notes). Each function takes the
per-seed long table of `vlstress summarize` (`summary.csv`); seeds are aggregated by
seaborn (mean, error bars = standard deviation over variant seeds, deterministic).
A stress family that has no records is never drawn from nothing: its panel is left
out, and the figure says so in a note (also logged). A figure with nothing to draw
at all becomes a labelled placeholder that states why.
"""

from __future__ import annotations

import json
import logging
import textwrap
from pathlib import Path
from typing import Any, Callable

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

from .io import atomic_path  # noqa: E402
from .report import records  # noqa: E402

log = logging.getLogger(__name__)

PAPER_STYLE = {"context": "paper", "style": "whitegrid", "font_scale": 1.2}
ORIGINAL_COLOR = "0.65"
ERRORBAR_NOTE = "error bars: standard deviation over variant seeds"

FigureResult = tuple[plt.Figure, list[str]]


def setup() -> None:
    sns.set_theme(**PAPER_STYLE)
    plt.rcParams.update({"svg.hashsalt": "vlstress", "pdf.compression": 6, "figure.dpi": 150, "savefig.dpi": 200})


def save(fig: plt.Figure, png: Path, provenance: dict[str, Any]) -> Path:
    """Write `png` and the PDF beside it; both carry the provenance block."""
    text = json.dumps(provenance, sort_keys=True)
    pdf = Path(png).with_suffix(".pdf")
    with atomic_path(png) as tmp:
        fig.savefig(tmp, format="png", bbox_inches="tight", metadata={"Software": None, "Description": text})
    with atomic_path(pdf) as tmp:
        fig.savefig(tmp, format="pdf", bbox_inches="tight", metadata={"Creator": None, "Producer": None, "CreationDate": None, "Subject": text})
    plt.close(fig)
    return pdf


# --------------------------------------------------------------------------- helpers


def _tick(label: str) -> str:
    """`ViT-B-32 (random-init)` -> two lines, so that x tick labels stay readable."""
    return label.replace(" (", "\n(", 1)


def _dataset(table: pd.DataFrame) -> str:
    return ", ".join(sorted(table["dataset"].astype(str).unique()))


def _add_notes(fig: plt.Figure, notes: list[str], y: float = 0.0) -> None:
    if notes:
        text = "\n".join(textwrap.fill(f"Note: {n}", 110) for n in notes)
        fig.text(0.01, y, text, ha="left", va="top", fontsize="small", style="italic", color="0.3")


def placeholder(title: str, reason: str) -> plt.Figure:
    """A figure that states why there is nothing to draw (never invented data)."""
    fig, ax = plt.subplots(figsize=(6.4, 2.4))
    ax.set_axis_off()
    ax.set_title(title)
    ax.text(0.5, 0.5, textwrap.fill(reason, 60), ha="center", va="center", transform=ax.transAxes, style="italic", color="0.3")
    return fig


def _palette(conditions: list[str]) -> dict[str, Any]:
    colors = sns.color_palette("colorblind", max(len(conditions), 1))
    stressed = [c for c in conditions if c != "original"]
    palette = {c: colors[i] for i, c in enumerate(stressed)}
    palette["original"] = ORIGINAL_COLOR
    return palette


def _family_rows(table: pd.DataFrame, stress: str, metric: str) -> pd.DataFrame:
    family = records.FAMILIES[stress]
    return table[(table["stress"] == stress) & (table["metric"] == f"{family.direction}_{metric}")]


def _absent(stress: str, what: str) -> str:
    return f"no {records.FAMILIES[stress].title} records, {what} left out"


# --------------------------------------------------------------------------- figures


def recall_bars(table: pd.DataFrame) -> FigureResult:
    """Per model: R@1 on the original gallery next to each text set (image → text) and image variant (text → image)."""
    notes: list[str] = []
    models = records.models(table)
    panels = []
    for stress, family in records.FAMILIES.items():
        stressed = _family_rows(table, stress, "R@1")
        if stressed.empty:
            notes.append(_absent(stress, f"the {records.DIRECTIONS[family.direction]} panel is"))
            continue
        original = table[(table["stress"] == "none") & (table["metric"] == f"{family.direction}_R@1")]
        panels.append((family.direction, pd.concat([original, stressed]), ["original", *records.conditions(table, stress)]))
    if not panels:  # only the original gallery: R@1 of both directions, said plainly
        notes.append("only original-gallery records: no stress condition to compare")
        original = table[(table["stress"] == "none") & table["metric"].isin(["i2t_R@1", "t2i_R@1"])]
        if original.empty:
            return placeholder("R@1 under stress", "no R@1 records to draw"), notes
        original = original.assign(condition_label=original["metric"].map(lambda m: records.DIRECTIONS[m[:3]]))
        panels.append(("original", original, list(dict.fromkeys(original["condition_label"]))))
    if table.groupby(["model", "condition", "metric"])["value"].size().max() > 1:
        notes.append(ERRORBAR_NOTE)
    width = sum(1.6 + 0.32 * len(models) * len(hue) for _, _, hue in panels)
    fig, axes = plt.subplots(1, len(panels), figsize=(max(width, 5.0), 4.2), squeeze=False, sharey=True)
    for ax, (direction, data, hue_order) in zip(axes[0], panels):
        data = data.assign(tick=data["label"].map(_tick))
        sns.barplot(
            data=data, x="tick", y="value", hue="condition_label", order=[_tick(m) for m in models],
            hue_order=hue_order, palette=_palette(hue_order), errorbar="sd", capsize=0.15,
            err_kws={"linewidth": 1.0}, ax=ax,
        )  # fmt: skip
        ax.set_ylim(0, 100)
        ax.set_xlabel("")
        ax.set_ylabel("R@1 (%)")
        ax.set_title(records.DIRECTIONS.get(direction, "original gallery"))
        sns.move_legend(ax, "upper center", bbox_to_anchor=(0.5, -0.18), ncol=min(len(hue_order), 3), title=None, frameon=False)
    fig.suptitle(f"Recall@1 on the original gallery and under stress ({_dataset(table)})")
    fig.tight_layout()
    _add_notes(fig, notes)
    return fig, notes


def _stress_rows(table: pd.DataFrame, metric: str, notes: list[str], absent_what: str) -> list[tuple]:
    """(rows, short direction, family) of every stress family that has `metric`; absent families go to notes."""
    found = []
    for stress, family in records.FAMILIES.items():
        rows = _family_rows(table, stress, metric)
        if rows.empty:
            notes.append(_absent(stress, absent_what))
            continue
        found.append((rows, "I→T" if family.direction == "i2t" else "T→I", family))
    return found


def false_r1_heatmap(table: pd.DataFrame) -> FigureResult:
    """False R@1 (% of queries whose top-1 is a distractor) for every model x stress variant."""
    notes: list[str] = []
    parts = [
        rows.assign(column=rows["condition_label"].str.replace(" λ=", "\nλ=") + f"\n({short})")
        for rows, short, _ in _stress_rows(table, "false_R@1", notes, "its columns are")
    ]
    if not parts:
        return placeholder("False R@1", "no stress records (text sets or image variants): no false R@1 to show"), notes
    data = pd.concat(parts)
    columns = list(dict.fromkeys(data["column"]))
    models = [m for m in records.models(table) if m in set(data["label"])]
    matrix = data.groupby(["label", "column"], sort=False)["value"].mean().unstack().reindex(index=models, columns=columns)
    if data.groupby(["model", "condition"])["value"].size().max() > 1:
        notes.append("cells: mean over variant seeds")
    fig, ax = plt.subplots(figsize=(2.4 + 1.2 * len(columns), 1.8 + 0.6 * len(models)))
    sns.heatmap(
        matrix, annot=True, fmt=".1f", cmap="rocket_r", vmin=0, vmax=100, linewidths=0.5,
        cbar_kws={"label": "false R@1 (%)"}, ax=ax,
    )  # fmt: skip
    ax.set_xlabel("stress variant (retrieval direction)")
    ax.set_ylabel("")
    ax.tick_params(axis="x", labelrotation=0)
    ax.set_title(f"False R@1: top-1 is an altered caption / a mixed image ({_dataset(table)})")
    fig.tight_layout()
    _add_notes(fig, notes)
    return fig, notes


def lambda_sweep(table: pd.DataFrame) -> FigureResult:
    """Text → image R@1 and false R@1 against λ, per image method, lines per model, seed error bars."""
    notes: list[str] = []
    image = table[table["stress"] == "image"]
    if image.empty:
        notes.append(_absent("image", "the λ sweep is"))
        return placeholder("λ sweep of the image variants", "no image-variant records (image_variants not configured or not run)"), notes
    methods = list(dict.fromkeys(image["variant"]))
    models = records.models(image)
    colors = dict(zip(models, sns.color_palette("colorblind", len(models))))
    if image["lam"].nunique() < 2:
        notes.append(f"a single λ ({image['lam'].iloc[0]:g}): each curve is one point")
    if image.groupby(["model", "condition", "metric"])["value"].size().max() > 1:
        notes.append(ERRORBAR_NOTE + "; dotted: R@1 on the original gallery")
    rows = [("t2i_R@1", "R@1 (%)"), ("t2i_false_R@1", "false R@1 (%)")]
    fig, axes = plt.subplots(len(rows), len(methods), figsize=(1.0 + 3.6 * len(methods), 6.4), squeeze=False, sharex="col", sharey="row")
    original = table[(table["stress"] == "none") & (table["metric"] == "t2i_R@1")].groupby("label")["value"].mean()
    for col, method in enumerate(methods):
        for row, (metric, ylabel) in enumerate(rows):
            ax = axes[row][col]
            data = image[(image["variant"] == method) & (image["metric"] == metric)]
            if not data.empty:
                sns.lineplot(
                    data=data, x="lam", y="value", hue="label", hue_order=models, palette=colors, errorbar="sd",
                    err_style="bars", err_kws={"capsize": 3}, marker="o", ax=ax, legend=False,
                )  # fmt: skip
            if metric == "t2i_R@1":
                for model, value in original.items():
                    if model in colors:
                        ax.axhline(value, color=colors[model], linestyle=":", linewidth=1.2)
            ax.set_ylim(0, 100)
            ax.set_xlabel("λ (share of the original image)" if row == len(rows) - 1 else "")
            ax.set_ylabel(ylabel if col == 0 else "")
            if row == 0:
                ax.set_title(records.FAMILIES["image"].variants.get(method, method))
            lams = sorted(image["lam"].dropna().unique())
            ax.set_xticks(lams)
            ax.set_xticklabels([f"{v:g}" for v in lams])
    handles = [Line2D([], [], color=colors[m], marker="o", label=m) for m in models]
    handles.append(Line2D([], [], color="0.3", linestyle=":", label="original gallery"))
    fig.suptitle(f"Text → image retrieval against λ ({_dataset(table)})")
    fig.tight_layout()
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.02), ncol=min(len(handles), 3), frameon=False)
    _add_notes(fig, notes, y=-0.05 - 0.04 * ((len(handles) - 1) // 3))  # below the legend
    return fig, notes


def drop_vs_size(table: pd.DataFrame) -> FigureResult:
    """Drop rate of R@1 against model size (parameters, log scale), one line per stress condition."""
    notes: list[str] = []
    parts = [
        rows.assign(condition=rows["condition_label"] + f" ({short})", family=family.title)
        for rows, short, family in _stress_rows(table, "drop_rate", notes, "its lines are")
    ]
    if not parts:
        return placeholder("Drop rate vs model size", "no stress records (text sets or image variants): no drop rate to show"), notes
    data = pd.concat(parts)
    unsized = sorted(data.loc[data["n_params"].isna(), "label"].unique())
    if unsized:
        notes.append(f"model size unknown (no n_params in provenance), left out: {', '.join(unsized)}")
    undefined = sorted(data.loc[data["value"].isna() & data["n_params"].notna(), "label"].unique())
    if undefined:
        notes.append(f"drop rate undefined where the original R@1 is 0: {', '.join(undefined)}")
    data = data.dropna(subset=["n_params", "value"])
    if data.empty:
        return placeholder("Drop rate vs model size", "; ".join(notes)), notes
    data = data.assign(size=data["n_params"] / 1e6)
    if data.groupby(["model", "condition", "metric"])["value"].size().max() > 1:
        notes.append(ERRORBAR_NOTE)
    conditions = list(dict.fromkeys(data["condition"]))
    fig, ax = plt.subplots(figsize=(7.2, 4.6))
    sns.lineplot(
        data=data, x="size", y="value", hue="condition", hue_order=conditions, style="family", markers=True,
        dashes=False, errorbar="sd", err_style="bars", err_kws={"capsize": 3}, palette="colorblind", ax=ax,
    )  # fmt: skip
    ax.set_xscale("log")
    sizes = data.groupby("size")["label"].apply(lambda s: "\n".join(dict.fromkeys(s)))
    ax.set_xticks(list(sizes.index))
    ax.set_xticklabels([f"{size:.0f}M\n{labels}" for size, labels in sizes.items()], fontsize="small")
    ax.minorticks_off()
    ax.set_xlabel("model size (parameters, log scale)")
    ax.set_ylabel("drop rate of R@1 (%)")
    ax.axhline(0, color="0.5", linewidth=0.8)
    ax.set_title(f"Drop rate vs model size ({_dataset(table)})")
    sns.move_legend(ax, "upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, title=None)
    fig.tight_layout()
    _add_notes(fig, notes)
    return fig, notes


FIGURES: dict[str, Callable[[pd.DataFrame], FigureResult]] = {
    "recall_bars": recall_bars,
    "false_r1_heatmap": false_r1_heatmap,
    "lambda_sweep": lambda_sweep,
    "drop_vs_size": drop_vs_size,
}
