"""What every suite's figures share: the paper style, reproducible saving (PNG + PDF, provenance in
the metadata), notes, placeholders that say why there is nothing to draw (never invented data), and
row selections of the long summary table. A suite's figure module (`FIGURES`: name ->
function(table) -> (figure, notes)) is drawn by `vlstress figures --module`."""

from __future__ import annotations

import json
import logging
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from vlstress.io import atomic_path  # noqa: E402

log = logging.getLogger(__name__)

PAPER_STYLE = {"context": "paper", "style": "whitegrid", "font_scale": 1.2}

FigureResult = tuple[plt.Figure, list[str]]


def setup() -> None:
    sns.set_theme(**PAPER_STYLE)
    plt.rcParams.update(
        {"svg.hashsalt": "vlstress", "pdf.compression": 6, "figure.dpi": 150, "savefig.dpi": 200}
    )


def save(fig: plt.Figure, png: Path, provenance: dict[str, Any]) -> Path:
    """Write `png` and the PDF beside it; both carry the provenance block."""
    text = json.dumps(provenance, sort_keys=True)
    pdf = Path(png).with_suffix(".pdf")
    with atomic_path(png) as tmp:
        fig.savefig(
            tmp, format="png", bbox_inches="tight", metadata={"Software": None, "Description": text}
        )
    with atomic_path(pdf) as tmp:
        fig.savefig(
            tmp,
            format="pdf",
            bbox_inches="tight",
            metadata={"Creator": None, "Producer": None, "CreationDate": None, "Subject": text},
        )
    plt.close(fig)
    return pdf


# --------------------------------------------------------------------------- helpers


TOWER_ORDER = ("cnn", "transformer", "hybrid", "unknown")  # image-tower kinds (pool.attributes)


def tower_colours() -> dict[str, Any]:
    """The colour of each image-tower kind, the same in every figure that compares CNN and
    transformer towers (colorblind palette; an unknown tower grey)."""
    palette = sns.color_palette("colorblind", 3)
    return dict(zip(TOWER_ORDER, [palette[0], palette[1], palette[2], (0.5, 0.5, 0.5)]))


def _tick(label: str) -> str:
    """`ViT-B-32 (random-init)` -> two lines, so that x tick labels stay readable; a long weights
    part (`(my/model.safetensors)`) breaks after its folder too, and a fine-tuned model's slug
    (`vit-b-32-random+sc_vc`, with or without `(random-init base)`) before its `+`."""
    arch, sep, weights = label.partition(" (")
    if not sep:
        return label.replace("+", "\n+", 1)
    if len(weights) > 16 and "/" in weights:
        weights = weights.replace("/", "/\n", 1)
    arch = arch.replace("+", "\n+", 1)
    return f"{arch}\n({weights}"


def _dataset(table: pd.DataFrame) -> str:
    return ", ".join(sorted(table["dataset"].astype(str).unique()))


def _add_notes(fig: plt.Figure, notes: list[str], y: float = 0.0) -> None:
    if notes:
        text = "\n".join(textwrap.fill(f"Note: {n}", 110) for n in notes)
        fig.text(0.01, y, text, ha="left", va="top", fontsize="small", style="italic", color="0.3")


MODEL_PANELS_PER_ROW = 3  # one panel per model: more models wrap to further rows (paper width)


def model_panels(
    n: int, width: float, height: float, extra_width: float = 1.6, sharey: bool = True
) -> tuple[plt.Figure, list[Any], list[Any], list[Any]]:
    """A figure of n panels of width x height inches, at most MODEL_PANELS_PER_ROW a row (extra
    width: a legend beside the top row): (figure, the panels row by row, the first panel of each
    row, the last panel of each row); unused cells are hidden."""
    columns = max(1, min(n, MODEL_PANELS_PER_ROW))
    rows = -(-n // columns)
    fig, grid = plt.subplots(
        rows,
        columns,
        figsize=(width * columns + extra_width, height * rows),
        squeeze=False,
        sharey=sharey,
    )
    flat = list(grid.flat)
    for ax in flat[n:]:
        ax.set_visible(False)
    panels = flat[:n]
    firsts = [panels[i] for i in range(0, n, columns)]
    lasts = [panels[min(i + columns, n) - 1] for i in range(0, n, columns)]
    return fig, panels, firsts, lasts


def placeholder(title: str, reason: str) -> plt.Figure:
    """A figure that states why there is nothing to draw (never invented data)."""
    fig, ax = plt.subplots(figsize=(6.4, 2.4))
    ax.set_axis_off()
    ax.set_title(title)
    ax.text(
        0.5,
        0.5,
        textwrap.fill(reason, 60),
        ha="center",
        va="center",
        transform=ax.transAxes,
        style="italic",
        color="0.3",
    )
    return fig


def no_records(title: str, suite: str) -> FigureResult:
    """The placeholder of a figure whose suite has no records, and the note that says so."""
    reason = f"no {suite} records: the suite is off or its steps have not run"
    return placeholder(title, reason), [reason]


def task_rows(table: pd.DataFrame, task: str, metric: str = "top1") -> pd.DataFrame:
    """One metric of one task, with the condition's corruption and severity as columns."""
    rows = table[(table["task"] == task) & (table["metric"] == metric)].copy()
    conditions = rows["condition_json"].map(json.loads)
    for key in ("corruption", "severity"):
        rows[key] = conditions.map(lambda c, key=key: c.get(key))
    return rows


def metric_rows(table: pd.DataFrame, task: str, metrics: Sequence[str]) -> pd.DataFrame:
    """Some metrics of one task, with the condition as a dict column `condition_dict`."""
    rows = table[(table["task"] == task) & table["metric"].isin(list(metrics))].copy()
    rows["condition_dict"] = rows["condition_json"].map(json.loads)
    return rows


def clean_name(data: pd.DataFrame) -> str:
    """The clean test set a derived one comes from (`objects-c-fog` -> `objects`)."""
    return ", ".join(sorted({str(name).split("-c-")[0] for name in data["dataset"]}))


# --------------------------------------------------------------------------- what a reader must see

RANDOM_BASE = "random-init base"


def mark_random_init(table: pd.DataFrame) -> pd.DataFrame:
    """`table` with the label of every checkpoint model whose slug is `<base>+<variant>` of a
    random-init model of the table (a fine-tuned variant, as the finetune suite names them)
    marked `(random-init base)`: its weights were trained from random ones, whatever its name
    says."""
    if table.empty or not {"model", "label", "weights_kind"} <= set(table.columns):
        return table
    kinds = table.drop_duplicates("model").set_index("model")["weights_kind"].astype(str)
    random = {model for model, kind in kinds.items() if kind == "random-init"}
    marked = {
        model: True
        for model, kind in kinds.items()
        if kind == "checkpoint" and str(model).partition("+")[0] in random and "+" in str(model)
    }
    if not marked:
        return table
    table = table.copy()
    rows = table["model"].isin(list(marked)) & ~table["label"].astype(str).str.contains(
        RANDOM_BASE, regex=False
    )
    table.loc[rows, "label"] = table.loc[rows, "label"].astype(str) + f" ({RANDOM_BASE})"
    return table


def sample_note(rows: pd.DataFrame, unit: str = "images") -> str:
    """`n = 30 images per model (objects)`: the items behind each value, per test set (from the
    rows' `n_images`); `n unknown` where the records do not say."""
    if rows.empty or "n_images" not in rows:
        return f"n: {unit} per model unknown"
    counts = (
        rows.dropna(subset=["n_images"])
        .groupby(rows["dataset"].astype(str), sort=False)["n_images"]
        .agg(lambda s: sorted({int(v) for v in s}))
    )
    if counts.empty:
        return f"n: {unit} per model unknown"
    sizes = {"/".join(map(str, v)) for v in counts}
    if len(sizes) == 1:
        return f"n = {sizes.pop()} {unit} per model ({', '.join(counts.index)})"
    return f"n ({unit} per model): " + ", ".join(
        f"{name} {'/'.join(map(str, v))}" for name, v in counts.items()
    )


WILSON_NOTE = "error bars: 95% Wilson interval over the n images of each bar"
WILSON_BAND_NOTE = "bands: 95% Wilson interval over the n items of each point"


def wilson_bars(
    ax: Any,
    data: pd.DataFrame,
    x: str,
    hue: str,
    order: Sequence[str],
    hue_order: Sequence[str],
    n_column: str = "n_images",
) -> int:
    """95% Wilson intervals on the bars of a seaborn bar plot of shares in percent (`value` over
    `n_column` items; `order` the x categories, `hue_order` one bar container each). A bar that
    stands for more than one row (a mean) gets none. Returns how many bars got one."""
    from vlstress.report.intervals import wilson_percent

    bounds = {}
    for key, rows in data.groupby([x, hue], sort=False):
        if len(rows) != 1:
            continue
        row = rows.iloc[0]
        lo, hi = wilson_percent([row["value"]], [row[n_column]])
        bounds[key] = (float(row["value"]), float(lo[0]), float(hi[0]))
    return bar_intervals(ax, bounds, order, hue_order)


def interval_note(method: str, drawn: int, total: int, noun: str = "bars") -> str:
    """What the error bars drawn (`bar_intervals`) are (`method`), and how many of the `total`
    bars (or other `noun`) have none."""
    text = f"error bars: {method} (results/headlines.csv)"
    if drawn < total:
        text += (
            f"; {total - drawn} of {total} {noun} have none (under 10 items, a mean over "
            "replicate seeds or every resample the same value)"
        )
    return text


def bar_intervals(
    ax: Any,
    bounds: Mapping[tuple[Any, Any], tuple[float, float, float]],
    order: Sequence[str],
    hue_order: Sequence[str],
    orient: str = "v",
) -> int:
    """An error bar on each bar of a seaborn bar plot whose (category, hue level) has bounds:
    (value, lo, hi); `order` the categories (positions 0, 1, ...), `hue_order` one bar container
    each; `orient` "h" for horizontal bars. A bar without finite bounds gets none. Returns how
    many bars got one."""
    horizontal = orient == "h"
    drawn = 0
    # the bar containers only: each error bar drawn adds a container of its own
    for container, level in zip(list(ax.containers)[: len(hue_order)], hue_order):
        for bar in container:
            if horizontal:
                centre = bar.get_y() + bar.get_height() / 2
            else:
                centre = bar.get_x() + bar.get_width() / 2
            found = bounds.get((order[round(centre)], level))
            if found is None:
                continue
            value, lo, hi = found
            if not (np.isfinite(lo) and np.isfinite(hi)):
                continue
            error = [[max(value - lo, 0.0)], [max(hi - value, 0.0)]]
            ax.errorbar(
                value if horizontal else centre,
                centre if horizontal else value,
                xerr=error if horizontal else None,
                yerr=None if horizontal else error,
                fmt="none",
                ecolor="0.2",
                elinewidth=1.0,
                capsize=2.5,
                zorder=3,
            )
            drawn += 1
    return drawn


def identical_series(values: pd.DataFrame, by: str = "label") -> dict[str, str]:
    """Series that repeat an earlier one exactly: `values` holds one row per (series, point) with
    a `point` column (any hashable) and `value`; returns series -> the earlier series it equals at
    every point (a coincident line or marker hides the other)."""
    found: dict[str, str] = {}
    seen: list[tuple[str, dict]] = []
    for name, group in values.groupby(by, sort=False):
        points = dict(zip(group["point"], group["value"].round(9)))
        same = next((other for other, pts in seen if pts == points), None)
        if same is not None:
            found[str(name)] = same
        else:
            seen.append((str(name), points))
    return found


def identical_note(found: dict[str, str]) -> list[str]:
    """The note for `identical_series`' result (none when nothing coincides)."""
    if not found:
        return []
    pairs = "; ".join(f"{name} identical to {other}" for name, other in found.items())
    return [f"the same values at every point (each still drawn): {pairs}"]


def chance_levels(rows: pd.DataFrame) -> dict[str, float]:
    """Top-1 chance (100 / classes, %) of each test set of `rows` whose records say how many
    classes it has (the summary's `n_classes`)."""
    if "n_classes" not in rows:
        return {}
    known = rows.dropna(subset=["n_classes"])
    known = known[known["n_classes"].astype("float64") > 0]
    return {
        str(name): 100.0 / float(n)
        for name, n in known.groupby(known["dataset"].astype(str), sort=False)["n_classes"]
        .max()
        .items()
    }


def draw_chance(ax: Any, levels: Sequence[float | None], label: str = "chance") -> bool:
    """Chance on a bar chart of categories 0..k-1 (`levels`, in x order; None: unknown): one
    labelled line when every category has the same, else a dashed segment over each category.
    Returns whether anything was drawn."""
    known = [level for level in levels if level is not None]
    if not known:
        return False
    if len(set(known)) == 1 and len(known) == len(levels):
        chance_line(ax, known[0], label)
        return True
    for i, level in enumerate(levels):
        if level is not None:
            ax.hlines(level, i - 0.45, i + 0.45, color="0.25", linestyle="--", linewidth=1.0)
            ax.annotate(
                f"{label} {level:.3g}%",
                (i + 0.45, level),
                xytext=(-2, 2),
                textcoords="offset points",
                ha="right",
                va="bottom",
                fontsize="x-small",
                color="0.25",
            )
    return True


CHANCE_STYLE: dict[str, Any] = {"color": "0.25", "linestyle": "--", "linewidth": 1.0}


def chance_line(ax: Any, level: float, label: str | None = "chance") -> None:
    """A dashed horizontal line at `level` (e.g. 100 / classes for top-1 in %), labelled at the
    right end unless `label` is None (then the legend names it: `CHANCE_STYLE`)."""
    ax.axhline(level, zorder=1.5, **CHANCE_STYLE)
    if label is None:
        return
    ax.annotate(
        f"{label} {level:.3g}%",
        (1.0, level),
        xycoords=("axes fraction", "data"),
        xytext=(-3, 2),
        textcoords="offset points",
        ha="right",
        va="bottom",
        fontsize="x-small",
        color="0.25",
    )


def wilson_band(
    ax: Any,
    x: Sequence[float],
    value_pct: Sequence[float],
    n: Sequence[float],
    color: Any,
    alpha: float = 0.15,
) -> bool:
    """Shade the 95% Wilson interval around a line of shares in percent (`value_pct` of `n` items
    at each `x`); points without n get none. Returns whether anything was shaded."""
    from vlstress.report.intervals import wilson_percent

    lo, hi = wilson_percent(value_pct, n)
    ok = np.isfinite(lo) & np.isfinite(hi)
    if not ok.any():
        return False
    xs = np.asarray(x, dtype="float64")
    ax.fill_between(xs[ok], lo[ok], hi[ok], color=color, alpha=alpha, linewidth=0, zorder=1)
    return True


def wilson_errorbars(ax: Any, x: Any, value_pct: Any, n: Any, color: Any) -> bool:
    """95% Wilson error bars on markers of shares in percent (`value_pct` of `n` items at `x`);
    points without n get none. Returns whether any was drawn."""
    from vlstress.report.intervals import wilson_percent

    values = np.asarray(value_pct, dtype="float64")
    lo, hi = wilson_percent(values, n)
    ok = np.isfinite(lo) & np.isfinite(hi)
    if not ok.any():
        return False
    ax.errorbar(
        np.asarray(x, dtype="float64")[ok],
        values[ok],
        yerr=[np.maximum(values - lo, 0.0)[ok], np.maximum(hi - values, 0.0)[ok]],
        fmt="none",
        ecolor=color,
        elinewidth=1.0,
        capsize=2.0,
        zorder=2,
    )
    return True
