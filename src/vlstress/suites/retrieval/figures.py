"""Figures of retrieval and its RoCOCO stress-tests, from the long summary table (`summary.csv`).

Registry `FIGURES`: recall_bars (R@1 original vs each stress condition), false_r1_heatmap
(model x condition), lambda_sweep (each condition group against the task's sweep key, λ for the
image variants; seed error bars), drop_vs_size (drop rate against parameter count). Seeds are
aggregated by seaborn (mean, error bars = standard deviation over replicate seeds, deterministic).
The figures iterate over the task registry (`vlstress.report.tasks.TASKS`): each stress task
stresses the retrieval directions it names against its baseline task ("original"). A task that
has no records is never drawn from nothing: its panel is left out, and the figure says so in a
note (also logged). A figure with nothing to draw at all becomes a labelled placeholder that
states why.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns
from matplotlib.lines import Line2D

from vlstress.errors import VlstressError
from vlstress.report import records, tasks
from vlstress.report.figures import (
    FigureResult,
    _add_notes,
    _dataset,
    _tick,
    placeholder,
)
from vlstress.report.tasks import DIRECTIONS, ORIGINAL, SHORT_DIRECTIONS, TASKS

log = logging.getLogger(__name__)


def retrieval_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of retrieval tasks (those with directions): titles name their datasets only, not
    the zero-shot test sets of the same summary."""
    return table[table["task"].map(lambda task: bool(task in TASKS and TASKS[task].directions))]


ORIGINAL_COLOR = "0.65"
ERRORBAR_NOTE = "error bars: standard deviation over variant seeds"


def _palette(conditions: list[str]) -> dict[str, Any]:
    colors = sns.color_palette("colorblind", max(len(conditions), 1))
    stressed = [c for c in conditions if c != ORIGINAL]
    palette = {c: colors[i] for i, c in enumerate(stressed)}
    palette[ORIGINAL] = ORIGINAL_COLOR
    return palette


def _stress_cases() -> list[tuple[str, tasks.Task, str]]:
    """(task name, task, direction) of every registered stress task and retrieval direction it
    stresses."""
    return [
        (name, info, direction)
        for name, info in tasks.stressed_tasks()
        for direction in info.directions
    ]


def _absent(info: tasks.Task, what: str) -> str:
    return f"no {info.title} records, {what} left out"


def _baseline(info: tasks.Task) -> str:
    """The task whose records are the original gallery of a stressed task (`tasks.stressed_tasks`
    only yields tasks that have one)."""
    if info.baseline is None:
        raise VlstressError(f"task {info.title!r} stresses no baseline task")
    return info.baseline


def _title(task: str | None) -> str:
    info = TASKS.get(task or "")
    return info.title if info else str(task)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def recall_bars(table: pd.DataFrame) -> FigureResult:
    """Per model: R@1 on the original gallery next to each condition of each stress task (one panel
    per direction)."""
    notes: list[str] = []
    models = records.models(table)
    panels = []
    for name, info, direction in _stress_cases():
        stressed = records.rows(table, name, f"{direction}_R@1")
        if stressed.empty:
            notes.append(_absent(info, f"the {DIRECTIONS[direction]} panel is"))
            continue
        original = records.rows(table, _baseline(info), f"{direction}_R@1")
        if original.empty:
            notes.append(
                f"no {_title(info.baseline)} records: the {DIRECTIONS[direction]} panel has no "
                "original bars"
            )
        hue = [ORIGINAL] * (not original.empty) + records.conditions(table, name)
        panels.append((DIRECTIONS[direction], pd.concat([original, stressed]), hue))
    if not panels:  # only the original gallery: R@1 of both directions, said plainly
        notes.append("only original-gallery records: no stress condition to compare")
        parts = []
        for name, info in tasks.baseline_tasks():
            for direction in info.directions:
                rows = records.rows(table, name, f"{direction}_R@1")
                parts.append(rows.assign(condition_label=DIRECTIONS[direction]))
        original = pd.concat(parts) if parts else table.iloc[:0]
        if original.empty:
            return placeholder("R@1 under stress", "no R@1 records to draw"), notes
        panels.append(
            ("original gallery", original, list(dict.fromkeys(original["condition_label"])))
        )
    # only models with retrieval records (a supervised classifier has no text tower)
    drawn = set(pd.concat([data for _, data, _ in panels])["label"])
    models = [m for m in models if m in drawn]
    if records.max_replicates(table) > 1:
        notes.append(ERRORBAR_NOTE)
    width = sum(1.6 + 0.32 * len(models) * len(hue) for _, _, hue in panels)
    fig, axes = plt.subplots(
        1, len(panels), figsize=(max(width, 5.0), 4.2), squeeze=False, sharey=True
    )
    for ax, (title, data, hue_order) in zip(axes[0], panels):
        data = data.assign(tick=data["label"].map(_tick))
        sns.barplot(
            data=data,
            x="tick",
            y="value",
            hue="condition_label",
            order=[_tick(m) for m in models],
            hue_order=hue_order,
            palette=_palette(hue_order),
            errorbar="sd",
            capsize=0.15,
            err_kws={"linewidth": 1.0},
            ax=ax,
        )
        ax.set_ylim(0, 100)
        ax.set_xlabel("")
        ax.set_ylabel("R@1 (%)")
        ax.set_title(title)
        # below the model names, however many lines they take
        lines = max((t.get_text().count("\n") + 1 for t in ax.get_xticklabels()), default=1)
        sns.move_legend(
            ax,
            "upper center",
            bbox_to_anchor=(0.5, -0.08 - 0.07 * lines),
            ncol=min(len(hue_order), 2),  # two panels side by side: their legends must not meet
            title=None,
            frameon=False,
        )
    fig.suptitle(
        f"Recall@1 on the original gallery and under stress ({_dataset(retrieval_rows(table))})"
    )
    fig.tight_layout()
    _below_ticks(fig)
    _add_notes(fig, notes)
    return fig, notes


def _below_ticks(fig) -> None:
    """Each panel's legend just below its lowest model name, however many lines the names take."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        legend = ax.get_legend()
        boxes = [t.get_window_extent(renderer) for t in ax.get_xticklabels() if t.get_text()]
        if legend is None or not boxes:
            continue
        lowest = min(box.y0 for box in boxes) - 6  # pixels of space
        y = ax.transAxes.inverted().transform((0, lowest))[1]
        legend.set_bbox_to_anchor((0.5, y), transform=ax.transAxes)


def _stress_rows(
    table: pd.DataFrame, metric: str, notes: list[str], absent_what: str
) -> list[tuple]:
    """(rows, short direction, task) of every stress task and direction that has `metric`; absent
    ones go to notes."""
    found = []
    for name, info, direction in _stress_cases():
        rows = records.rows(table, name, f"{direction}_{metric}")
        if rows.empty:
            notes.append(_absent(info, absent_what))
            continue
        found.append((rows, SHORT_DIRECTIONS[direction], info))
    return found


def _no_stress_reason(what: str) -> str:
    nouns = " or ".join(dict.fromkeys(info.noun for _, info in tasks.stressed_tasks()))
    return f"no stress records ({nouns}): no {what} to show"


def false_r1_heatmap(table: pd.DataFrame) -> FigureResult:
    """False R@1 (% of queries whose top-1 is a distractor) for every model x stress condition."""
    notes: list[str] = []
    found = _stress_rows(table, "false_R@1", notes, "its columns are")
    parts = [
        rows.assign(
            column=rows["condition_label"].str.replace(" ", "\n", n=1, regex=False) + f"\n({short})"
        )
        for rows, short, _ in found
    ]
    if not parts:
        return placeholder("False R@1", _no_stress_reason("false R@1")), notes
    data = pd.concat(parts)
    columns = list(dict.fromkeys(data["column"]))
    models = [m for m in records.models(table) if m in set(data["label"])]
    matrix = (
        data.groupby(["label", "column"], sort=False)["value"]
        .mean()
        .unstack()
        .reindex(index=models, columns=columns)
    )
    if records.max_replicates(data) > 1:
        notes.append("cells: mean over variant seeds")
    fig, ax = plt.subplots(figsize=(2.4 + 1.5 * len(columns), 1.8 + 0.6 * len(models)))
    sns.heatmap(
        matrix,
        annot=True,
        fmt=".1f",
        cmap="rocket_r",
        vmin=0,
        vmax=100,
        linewidths=0.5,
        cbar_kws={"label": "false R@1 (%)"},
        ax=ax,
    )
    ax.set_xlabel("stress variant (retrieval direction)")
    ax.set_ylabel("")
    ax.tick_params(axis="x", labelrotation=0)
    distractors = (
        " / ".join(dict.fromkeys(info.distractor for _, _, info in found if info.distractor))
        or "a distractor"
    )
    ax.set_title(f"False R@1: top-1 is {distractors} ({_dataset(retrieval_rows(table))})")
    fig.tight_layout()
    _add_notes(fig, notes)
    return fig, notes


def _sweep_columns(
    table: pd.DataFrame, notes: list[str]
) -> list[tuple[str, tasks.Task, str, pd.DataFrame]]:
    """(task name, task, group label, rows with a `sweep` column) per condition group of every task
    with a sweep key."""
    columns = []
    for name, info in tasks.stressed_tasks():
        if not info.sweep:
            continue
        data = records.rows(table, name)
        data = data.assign(sweep=records.condition_values(data, info.sweep)).dropna(
            subset=["sweep"]
        )
        symbol = tasks.sweep_symbol(info)
        if data.empty:
            notes.append(_absent(info, f"the {symbol} sweep is"))
            continue
        if data["sweep"].nunique() < 2:
            notes.append(f"a single {symbol} ({data['sweep'].iloc[0]:g}): each curve is one point")
        group = data["condition_json"].map(
            lambda text: tasks.condition_label(
                name, {k: v for k, v in json.loads(text).items() if k != info.sweep}
            )
        )
        data = data.assign(group=group)
        columns += [
            (name, info, label, data[data["group"] == label]) for label in dict.fromkeys(group)
        ]
    return columns


def lambda_sweep(table: pd.DataFrame) -> FigureResult:
    """R@1 and false R@1 against the sweep key (λ of the image variants), per condition group, lines
    per model, seed error bars."""
    notes: list[str] = []
    columns = _sweep_columns(table, notes)
    if not columns:
        sweeps = [info for _, info in tasks.stressed_tasks() if info.sweep]
        info = sweeps[0] if sweeps else None
        title = f"{tasks.sweep_symbol(info)} sweep of the {info.noun}" if info else "Sweep"
        reason = (
            f"no {info.title} records (not configured or not run)"
            if info
            else "no task with a sweep key"
        )
        return placeholder(title, reason), notes
    swept = pd.concat([data for _, _, _, data in columns])
    models = records.models(swept)
    colors = dict(zip(models, sns.color_palette("colorblind", len(models))))
    originals = {
        name: records.rows(table, _baseline(info), f"{info.directions[0]}_R@1")
        .groupby("label")["value"]
        .mean()
        for name, info, _, _ in columns
    }
    has_original = any(not o.empty for o in originals.values())
    if not has_original:
        baselines = ", ".join(dict.fromkeys(_title(info.baseline) for _, info, _, _ in columns))
        notes.append(f"no {baselines} records: no original-gallery reference lines")
    if records.max_replicates(swept) > 1:
        notes.append(
            ERRORBAR_NOTE + ("; dotted: R@1 on the original gallery" if has_original else "")
        )
    rows = [("R@1", "R@1 (%)"), ("false_R@1", "false R@1 (%)")]
    fig, axes = plt.subplots(
        len(rows),
        len(columns),
        figsize=(1.0 + 3.6 * len(columns), 6.4),
        squeeze=False,
        sharex="col",
        sharey="row",
    )
    for col, (name, info, label, data) in enumerate(columns):
        direction = info.directions[0]
        original = originals[name]
        ticks = sorted(records.rows(swept, name)["sweep"].unique())
        for row, (metric, ylabel) in enumerate(rows):
            ax = axes[row][col]
            part = data[data["metric"] == f"{direction}_{metric}"]
            if not part.empty:
                sns.lineplot(
                    data=part,
                    x="sweep",
                    y="value",
                    hue="label",
                    hue_order=models,
                    palette=colors,
                    errorbar="sd",
                    err_style="bars",
                    err_kws={"capsize": 3},
                    marker="o",
                    ax=ax,
                    legend=False,
                )
            if metric == "R@1":
                for model, value in original.items():
                    if model in colors:
                        ax.axhline(value, color=colors[model], linestyle=":", linewidth=1.2)
            ax.set_ylim(0, 100)
            ax.set_xlabel(
                (info.sweep_label or tasks.sweep_symbol(info)) if row == len(rows) - 1 else ""
            )
            ax.set_ylabel(ylabel if col == 0 else "")
            if row == 0:
                ax.set_title(label)
            ax.set_xticks(ticks)
            ax.set_xticklabels([f"{v:g}" for v in ticks])
    handles = [Line2D([], [], color=colors[m], marker="o", label=m) for m in models]
    if has_original:
        handles.append(Line2D([], [], color="0.3", linestyle=":", label="original gallery"))
    directions = " / ".join(
        dict.fromkeys(DIRECTIONS[info.directions[0]] for _, info, _, _ in columns)
    )
    symbols = " / ".join(dict.fromkeys(tasks.sweep_symbol(info) for _, info, _, _ in columns))
    fig.suptitle(
        f"{_capital(directions)} retrieval against {symbols} ({_dataset(retrieval_rows(table))})"
    )
    fig.tight_layout()
    fig.legend(
        handles=handles,
        loc="upper center",
        bbox_to_anchor=(0.5, 0.02),
        ncol=min(len(handles), 3),
        frameon=False,
    )
    _add_notes(fig, notes, y=-0.05 - 0.04 * ((len(handles) - 1) // 3))  # below the legend
    return fig, notes


def drop_vs_size(table: pd.DataFrame) -> FigureResult:
    """Drop rate of R@1 against model size (parameters, log scale), one line per stress
    condition."""
    notes: list[str] = []
    parts = [
        rows.assign(condition=rows["condition_label"] + f" ({short})", family=info.title)
        for rows, short, info in _stress_rows(table, "drop_rate", notes, "its lines are")
    ]
    if not parts:
        return placeholder("Drop rate vs model size", _no_stress_reason("drop rate")), notes
    data = pd.concat(parts)
    unsized = sorted(data.loc[data["n_params"].isna(), "label"].unique())
    if unsized:
        notes.append(
            f"model size unknown (no n_params in provenance), left out: {', '.join(unsized)}"
        )
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
        data=data,
        x="size",
        y="value",
        hue="condition",
        hue_order=conditions,
        style="family",
        markers=True,
        dashes=False,
        errorbar="sd",
        err_style="bars",
        err_kws={"capsize": 3},
        palette="colorblind",
        ax=ax,
    )
    ax.set_xscale("log")
    sizes = data.groupby("size")["label"].apply(lambda s: "\n".join(dict.fromkeys(s)))
    ax.set_xticks(list(sizes.index))
    ax.set_xticklabels(
        [f"{size:.0f}M\n{labels}" for size, labels in sizes.items()], fontsize="small"
    )
    ax.minorticks_off()
    ax.set_xlabel("model size (parameters, log scale)")
    ax.set_ylabel("drop rate of R@1 (%)")
    ax.axhline(0, color="0.5", linewidth=0.8)
    ax.set_title(f"Drop rate vs model size ({_dataset(retrieval_rows(table))})")
    sns.move_legend(ax, "upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, title=None)
    fig.tight_layout()
    _add_notes(fig, notes)
    return fig, notes


FIGURES = {
    "recall_bars": recall_bars,
    "false_r1_heatmap": false_r1_heatmap,
    "lambda_sweep": lambda_sweep,
    "drop_vs_size": drop_vs_size,
}
