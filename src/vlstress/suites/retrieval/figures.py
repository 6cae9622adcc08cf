"""Figures of retrieval and its RoCOCO stress-tests, from the long summary table (`summary.csv`).

Registry `FIGURES`: recall_bars (R@1 original vs each stress condition), false_r1_heatmap
(model x condition), lambda_sweep (each condition group against the task's sweep key, λ for the
image variants), drop_vs_size (drop rate against parameter count). Every share (R@1, false R@1)
carries its 95% Wilson interval over the queries it counts (`queries`: images for image → text,
captions for text → image), of the mean over variant seeds where there are several (a fractional
count); the seeds themselves show as dots (bars) or error bars (sweep). The drop rate is no share:
its error bars are the standard deviation over seeds. Every figure states n.
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
    identical_note,
    identical_series,
    placeholder,
    wilson_band,
    wilson_bars,
)
from vlstress.report.tasks import DIRECTIONS, ORIGINAL, SHORT_DIRECTIONS, TASKS
from vlstress.suites.retrieval.queries import QUERY_NOUNS, interval, query_counts

log = logging.getLogger(__name__)


def retrieval_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of retrieval tasks (those with directions): titles name their datasets only, not
    the zero-shot test sets of the same summary."""
    return table[table["task"].map(lambda task: bool(task in TASKS and TASKS[task].directions))]


ORIGINAL_COLOR = "0.65"
ERRORBAR_NOTE = "error bars: standard deviation over variant seeds"
WILSON_QUERIES = (
    "95% Wilson interval over the n queries of each value (images for image → text, captions for "
    "text → image)"
)


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
    width = sum(1.6 + 0.32 * len(models) * len(hue) for _, _, hue in panels)
    fig, axes = plt.subplots(
        1, len(panels), figsize=(max(width, 5.0), 4.2), squeeze=False, sharey=True
    )
    zeros = intervals = dots = 0
    for ax, (title, data, hue_order) in zip(axes[0], panels):
        data = data.assign(tick=data["label"].map(_tick), n=query_counts(data))
        order = [_tick(m) for m in models]
        sns.barplot(
            data=data,
            x="tick",
            y="value",
            hue="condition_label",
            order=order,
            hue_order=hue_order,
            palette=_palette(hue_order),
            errorbar=None,
            ax=ax,
        )
        # one row per bar (the mean over seeds, a fractional count) for its Wilson interval
        means = (
            data.groupby(["tick", "condition_label"], sort=False)
            .agg(value=("value", "mean"), n=("n", "first"))
            .reset_index()
        )
        intervals += wilson_bars(ax, means, "tick", "condition_label", order, hue_order, "n")
        dots += _seed_dots(ax, data, order, hue_order)
        ax.set_ylim(0, 100)
        zeros += _mark_zero_bars(ax)
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
    if intervals:
        notes.append(f"error bars: {WILSON_QUERIES}, of the mean over variant seeds")
    if dots:
        notes.append("dots: each variant seed's R@1 (the bar is their mean)")
    if zeros:
        notes.append("a bar of height 0 is marked by a 0 in its colour")
    fig.suptitle(
        f"Recall@1 on the original gallery and under stress ({_dataset(retrieval_rows(table))})\n"
        f"{n_line(table)}",
        fontsize="medium",
    )
    fig.tight_layout()
    _below_ticks(fig)
    _add_notes(fig, notes)
    return fig, notes


def _seed_dots(ax: Any, data: pd.DataFrame, order: list[str], hue_order: list[str]) -> int:
    """Each seed's value as a small dot on a bar that is a mean over several seeds (bar containers
    in `hue_order`, x categories in `order`). Returns how many bars got dots."""
    cases = data.groupby(["tick", "condition_label"], sort=False)["value"]
    marked = 0
    for container, level in zip(ax.containers, hue_order):
        for bar in getattr(container, "patches", []):
            centre = bar.get_x() + bar.get_width() / 2
            key = (order[round(centre)], level)
            if key not in cases.groups or len(cases.groups[key]) < 2:
                continue
            values = cases.get_group(key).to_numpy(float)
            ax.scatter(
                [centre] * len(values),
                values,
                s=6,
                color="0.1",
                alpha=0.7,
                linewidths=0,
                zorder=4,
                gid="seeds",
            )
            marked += 1
    return marked


def _mark_zero_bars(ax: Any) -> int:
    """A bar of height 0 is invisible: a small 0 in its colour marks it (a missing bar stays
    empty). Returns how many were marked."""
    marked = 0
    for container in ax.containers:
        for bar in getattr(container, "patches", []):
            if bar.get_height() == 0:
                marked += 1
                ax.annotate(
                    "0",
                    (bar.get_x() + bar.get_width() / 2, 0),
                    xytext=(0, 1),
                    textcoords="offset points",
                    ha="center",
                    va="bottom",
                    fontsize="xx-small",
                    fontweight="bold",
                    color=bar.get_facecolor(),
                    # on white, above the bar's error bar that starts at 0
                    bbox={"boxstyle": "square,pad=0.05", "facecolor": "white", "edgecolor": "none"},
                    zorder=5,
                )
    return marked


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
    ax.set_title(
        f"False R@1: top-1 is {distractors} ({_dataset(retrieval_rows(table))})\n"
        f"{n_line(data, 'false_R@1')} per cell",
        fontsize="medium",
    )
    notes.append(
        "each cell: % of its n queries (images for image → text, captions for text → image); "
        "the stress table gives its 95% Wilson interval"
    )
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
            notes.append(
                f"a single {symbol} ({data['sweep'].iloc[0]:g}): one marker per model, no curve"
            )
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


MODEL_MARKERS = ("o", "s", "D", "^", "v", "P", "X", "<", ">", "h")


def _sweep_name(columns: list) -> str:
    return " / ".join(dict.fromkeys(tasks.sweep_symbol(info) for _, info, _, _ in columns))


def _sweep_points(ax: Any, part: pd.DataFrame, i: int, n: int, step: float, style: dict) -> bool:
    """One model's mean over seeds at each swept value (±1 std, clipped to 0..100), shifted by its
    place among the n models; a line joins its own points when there are several. Shaded: the 95%
    Wilson interval of each mean over its queries (a band along the line, a box around a lone
    point). Returns whether anything was shaded."""
    if part.empty:
        return False
    part = part.assign(n=query_counts(part))
    stats = (
        part.groupby("sweep")
        .agg(mean=("value", "mean"), std=("value", "std"), n=("n", "first"))
        .fillna({"std": 0.0})
        .sort_index()
    )
    offset = (i - (n - 1) / 2) * step / max(n - 1, 1)
    shaded = _wilson_shade(ax, stats.index + offset, stats, step / max(n, 1) / 2, style["color"])
    low = stats["mean"] - (stats["mean"] - stats["std"]).clip(lower=0.0)
    high = (stats["mean"] + stats["std"]).clip(upper=100.0) - stats["mean"]
    ax.errorbar(
        stats.index + offset,
        stats["mean"],
        yerr=[low, high],
        linestyle="-" if len(stats) > 1 else "none",
        markersize=5,
        capsize=2.5,
        elinewidth=1.0,
        **style,
    )
    return shaded


def _wilson_shade(ax: Any, x: Any, stats: pd.DataFrame, half_width: float, color: Any) -> bool:
    """The Wilson interval of each point of a line: a band when it has several points, else a box
    `half_width` either side of its one point."""
    if len(stats) > 1:
        return wilson_band(ax, list(x), list(stats["mean"]), list(stats["n"]), color)
    lo, hi = interval(float(stats["mean"].iloc[0]), float(stats["n"].iloc[0]))
    if pd.isna(lo):
        return False
    centre = float(x[0])
    ax.fill_between(
        [centre - half_width, centre + half_width],
        lo,
        hi,
        color=color,
        alpha=0.2,
        linewidth=0,
        zorder=1,
    )
    return True


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

    def style(i: int) -> dict[str, Any]:
        return {"color": colors[models[i]], "marker": MODEL_MARKERS[i % len(MODEL_MARKERS)]}

    values = sorted(swept["sweep"].unique())
    # models side by side around each swept value, so that equal values do not hide each other
    step = min((b - a for a, b in zip(values, values[1:])), default=0.1) * 0.5
    identical = identical_series(
        swept.groupby(["label", "task", "group", "metric", "sweep"], sort=False)["value"]
        .mean()
        .reset_index()
        .assign(point=lambda d: list(zip(d["task"], d["group"], d["metric"], d["sweep"])))
    )
    notes += identical_note(identical)
    notes.append(
        f"models drawn side by side within ±{step / 2:.2g} of each {_sweep_name(columns)} value"
    )
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
        notes.append(f"{ERRORBAR_NOTE} ({records.max_replicates(swept)}), clipped to 0–100%")
    if has_original:
        notes.append("dotted: R@1 on the original gallery")
    rows = [("R@1", "R@1 (%)"), ("false_R@1", "false R@1 (%)")]
    fig, axes = plt.subplots(
        len(rows),
        len(columns),
        figsize=(1.0 + 3.6 * len(columns), 6.4),
        squeeze=False,
        sharex="col",
        sharey="row",
    )
    shaded = False
    for col, (name, info, label, data) in enumerate(columns):
        direction = info.directions[0]
        original = originals[name]
        ticks = sorted(records.rows(swept, name)["sweep"].unique())
        for row, (metric, ylabel) in enumerate(rows):
            ax = axes[row][col]
            part = data[data["metric"] == f"{direction}_{metric}"]
            for i, model in enumerate(models):
                shaded |= _sweep_points(
                    ax, part[part["label"] == model], i, len(models), step, style(i)
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
            ax.set_xlim(min(ticks) - step, max(ticks) + step)
    handles = [Line2D([], [], label=m, **style(i)) for i, m in enumerate(models)]
    if has_original:
        handles.append(Line2D([], [], color="0.3", linestyle=":", label="original gallery"))
    directions = " / ".join(
        dict.fromkeys(DIRECTIONS[info.directions[0]] for _, info, _, _ in columns)
    )
    symbols = " / ".join(dict.fromkeys(tasks.sweep_symbol(info) for _, info, _, _ in columns))
    if shaded:
        notes.append(f"shaded: {WILSON_QUERIES}, of the mean over variant seeds")
    fig.suptitle(
        f"{_capital(directions)} retrieval against {symbols} ({_dataset(retrieval_rows(table))})"
        f"\n{n_line(swept)}",
        fontsize="medium",
    )
    fig.tight_layout()
    fig.legend(
        handles=handles,
        loc="upper center",
        bbox_to_anchor=(0.5, 0.02),
        ncol=min(len(handles), 2),
        frameon=False,
    )
    _add_notes(fig, notes, y=-0.05 - 0.04 * ((len(handles) - 1) // 2))  # below the legend
    return fig, notes


def _size_labels(sizes: pd.Series) -> dict[float, str]:
    """Parameter counts in millions, with as many decimals as it takes to tell apart the sizes
    that differ (at most 4)."""
    distinct = sorted(set(sizes))
    for digits in range(1, 5):
        text = {size: f"{size / 1e6:.{digits}f}M" for size in distinct}
        if len(set(text.values())) == len(distinct):
            break
    return text


def _counts(rows: pd.DataFrame, column: str) -> str:
    return "/".join(str(v) for v in sorted({int(v) for v in rows[column].dropna()}))


def n_line(table: pd.DataFrame, metric: str | None = None) -> str:
    """`n = 14 query images (image → text), 70 query captions (text → image)`: the queries behind
    each share, per direction that the table's retrieval rows (of `metric`, e.g. `false_R@1`) have;
    several counts (e.g. a caption set of some images only) joined by `/`."""
    rows = retrieval_rows(table)
    if metric is not None:
        rows = rows[rows["metric"].astype(str).str.endswith(f"_{metric}")]
    parts = []
    for short, noun in QUERY_NOUNS.items():
        mine = rows[rows["metric"].astype(str).str.startswith(f"{short}_")]
        if mine.empty:
            continue
        counts = _counts(mine.assign(n=query_counts(mine)), "n")
        parts.append(f"{counts or '?'} query {noun} ({DIRECTIONS[short]})")
    return "n = " + ", ".join(parts) if parts else "n unknown"


def _seed_note(data: pd.DataFrame) -> str:
    """What the error bars are, per stress family: ±1 std over its seeds, or none (one variant)."""
    parts = []
    for family, rows in data.groupby("family", sort=False):
        seeds = int(rows.groupby(["model", "condition"])["value"].size().max())
        parts.append(
            f"{family}: mean ± 1 std over {seeds} variant seeds"
            if seeds > 1
            else f"{family}: one variant set, no error bar"
        )
    return "; ".join(parts)


FAMILY_MARKERS = ("o", "X", "s", "D", "^", "v")


def drop_vs_size(table: pd.DataFrame) -> FigureResult:
    """Drop rate of R@1 per model, the models in order of size (parameter count under each name,
    an ordinal axis: sizes that barely differ are not stretched over the panel): one marker per
    (model, stress condition), side by side within a model's slot; no line joins two models.
    Error bars: ±1 std over variant seeds, clipped to the values a drop rate can take."""
    notes: list[str] = []
    parts = []
    for rows, short, info in _stress_rows(table, "drop_rate", notes, "its markers are"):
        original = table[
            (table["task"] == rows["task"].iloc[0])
            & (table["metric"] == rows["metric"].iloc[0].replace("drop_rate", "R@1_original"))
        ]
        first = original.groupby("model")["value"].first()
        parts.append(
            rows.assign(
                condition=rows["condition_label"] + f" ({short})",
                family=info.title,
                original=rows["model"].map(first),
            )
        )
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
    stats = (
        data.groupby(["label", "condition", "family"], sort=False)
        .agg(
            mean=("value", "mean"),
            std=("value", "std"),
            original=("original", "first"),
            size=("n_params", "first"),
        )
        .reset_index()
        .fillna({"std": 0.0})
    )
    # a drop rate is at most 100% (R@1 falls to 0) and at least 100 (1 - 100 / original R@1)
    upper = (stats["mean"] + stats["std"]).clip(upper=100.0)
    lowest = 100.0 * (1.0 - 100.0 / stats["original"].where(stats["original"] > 0))
    lower = (stats["mean"] - stats["std"]).where(
        lowest.isna(), (stats["mean"] - stats["std"]).clip(lower=lowest)
    )
    stats = stats.assign(low=stats["mean"] - lower, high=upper - stats["mean"])
    models = [m for m in records.models(data) if m in set(stats["label"])]
    sizes = data.groupby("label")["n_params"].first().astype("float64")
    models = sorted(models, key=lambda m: sizes[m])  # stable: table order within a size
    size_text = _size_labels(sizes)
    conditions = list(dict.fromkeys(data["condition"]))
    families = list(dict.fromkeys(data["family"]))
    colors = dict(zip(conditions, sns.color_palette("colorblind", len(conditions))))
    markers = {f: FAMILY_MARKERS[i % len(FAMILY_MARKERS)] for i, f in enumerate(families)}
    width = 0.8 / max(len(conditions), 1)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 + 2.1 * len(models)), 4.6))
    for i, condition in enumerate(conditions):
        rows = stats[stats["condition"] == condition]
        x = [models.index(m) - 0.4 + width * (i + 0.5) for m in rows["label"]]
        ax.errorbar(
            x,
            rows["mean"],
            yerr=[rows["low"], rows["high"]],
            fmt=markers[rows["family"].iloc[0]],
            color=colors[condition],
            markersize=6,
            capsize=2.5,
            elinewidth=1.0,
            linestyle="none",
            label=condition,
        )
    ax.set_xticks(
        range(len(models)), [f"{_tick(m)}\n{size_text[sizes[m]]}" for m in models], fontsize="small"
    )
    ax.set_xlim(-0.6, len(models) - 0.4)
    for edge in range(1, len(models)):
        ax.axvline(edge - 0.5, color="0.85", linewidth=0.8)
    ax.grid(axis="x", visible=False)
    ax.set_xlabel("model, in order of size (parameters)")
    ax.set_ylabel("drop rate of R@1 (%)")
    ax.set_ylim(top=105.0)  # a drop rate is at most 100%
    ax.axhline(0, color="0.5", linewidth=0.8)
    ax.set_title(
        f"Drop rate by model, in order of size ({_dataset(retrieval_rows(table))})\n"
        f"{n_line(data, 'drop_rate')} per marker",
        fontsize="medium",
    )
    handles = [
        Line2D([], [], marker=markers[f], color=colors[c], linestyle="none", label=c, markersize=6)
        for c, f in dict(zip(data["condition"], data["family"])).items()
    ]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    notes.append(
        _seed_note(data) + "; error bars clipped to the possible range (a drop rate is at most "
        "100%, at least 100 × (1 − 100 / original R@1))"
    )
    notes.append(
        "a drop rate is a ratio of two R@1 of the same queries, not a share of them: no Wilson "
        "interval (the R@1 intervals are in the recall figure and the stress table)"
    )
    fig.tight_layout()
    _add_notes(fig, notes)
    return fig, notes


FIGURES = {
    "recall_bars": recall_bars,
    "false_r1_heatmap": false_r1_heatmap,
    "lambda_sweep": lambda_sweep,
    "drop_vs_size": drop_vs_size,
}
