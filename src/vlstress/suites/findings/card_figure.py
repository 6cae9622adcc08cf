"""The figure of a robustness card: each headline number of the model with its interval against
the run's other models, as an embedded PNG (a data URI)."""

from __future__ import annotations

import base64
import io
from typing import Any

import numpy as np
import pandas as pd

from vlstress.report.cells import count_text


def _is_percent(label: str) -> bool:
    return "%" in label


def figure_uri(model: str, rows: pd.DataFrame, table: pd.DataFrame) -> str | None:
    """Each headline number of `model` (blue dot, 95% interval) against the run's other models on
    the same row (grey dots), a block of rows per task and metric: metrics in percent share one
    0-100 axis, any other metric gets its own. A PNG data URI, the same bytes for the same input."""
    from matplotlib.figure import Figure

    from vlstress.report import figures

    if rows.empty:
        return None
    figures.setup()
    percent = rows["metric_label"].map(_is_percent)
    blocks = [rows[percent]] + [g for _, g in rows[~percent].groupby("metric", sort=False)]
    blocks = [b for b in blocks if not b.empty]
    lines = [len(b) + b.groupby(["task", "metric"], sort=False).ngroups for b in blocks]
    fig = Figure(figsize=(9.0, 0.19 * sum(lines) + 0.9 * len(blocks) + 0.3))
    axes = fig.subplots(
        len(blocks), 1, squeeze=False, gridspec_kw={"height_ratios": [n + 3 for n in lines]}
    )[:, 0]
    others = table[table["model"] != model]
    for ax, block in zip(axes, blocks):
        _draw_block(ax, block, others)
        if _is_percent(block["metric_label"].iloc[0]):
            ax.set_xlim(-2, 102)
            ax.set_xlabel("percent", fontsize=8)
        else:
            ax.set_xlabel(block["metric_label"].iloc[0], fontsize=8)
    fig.suptitle(
        "blue: this model (95% interval where one is defined); grey: the run's other models",
        fontsize=9,
        x=0.01,
        ha="left",
    )
    fig.set_layout_engine("constrained")
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90, metadata={"Software": None})
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _shorten(text: str, most: int = 48) -> str:
    """A row label that leaves the plot room (the card's table has it in full): cut in the
    middle, since a condition's last words (`severity=5`) are what tell rows apart."""
    if len(text) <= most:
        return text
    head = most // 2 - 1
    return text[:head] + "…" + text[len(text) - (most - head - 1) :]


def _draw_block(ax: Any, block: pd.DataFrame, others: pd.DataFrame) -> None:
    """Rows of one axis: a bold heading per task and metric (written inside the plot, so that the
    labels leave the numbers room), then one line per set × condition."""
    from matplotlib.transforms import blended_transform_factory

    # from the figure's left edge: a heading runs over the row labels and the plot alike
    across = blended_transform_factory(ax.figure.transFigure, ax.transData)
    labels: list[str] = []
    y = 0
    for shade, ((_, _), group) in enumerate(block.groupby(["task", "metric"], sort=False)):
        first = group.iloc[0]
        better = "higher" if first["higher_is_better"] else "lower"
        ax.text(
            0.01,
            y,
            f"{first['task_title']}: {first['metric_label']} ({better} is better)",
            transform=across,
            fontsize=7.5,
            fontweight="bold",
            va="center",
            ha="left",
            in_layout=False,
        )
        if shade % 2:
            ax.axhspan(y - 0.5, y + len(group) + 0.5, color="0.95", zorder=0, linewidth=0)
        labels.append("")
        y += 1
        keys = ["task", "metric", "dataset", "condition"]
        pool = group[keys].merge(others[[*keys, "value"]], on=keys, how="left")
        place = {k: y + i for i, k in enumerate(zip(group["dataset"], group["condition"]))}
        ax.scatter(
            pool["value"],
            [place[k] for k in zip(pool["dataset"], pool["condition"])],
            s=12,
            color="0.6",
            zorder=2,
            linewidths=0,
        )
        ys = np.arange(y, y + len(group))
        value, lo, hi = (group[c].to_numpy(dtype="float64") for c in ("value", "lo", "hi"))
        has = np.isfinite(lo) & np.isfinite(hi)
        ax.errorbar(
            value[has],
            ys[has],
            # a rounding hair outside the interval (0% and its lower bound 1e-15) is no error
            xerr=np.clip([value[has] - lo[has], hi[has] - value[has]], 0.0, None),
            fmt="none",
            ecolor="C0",
            elinewidth=1.3,
            capsize=2,
            zorder=3,
        )
        ax.scatter(value, ys, s=22, color="C0", zorder=4)
        labels += [
            f"{_shorten(f'{d} · {c}')}  (n = {count_text(n) if pd.notna(n) else '?'})"
            for d, c, n in zip(group["dataset"], group["condition_label"], group["n"])
        ]
        y += len(group)
    ax.set_yticks(np.arange(y), labels=labels, fontsize=7)
    ax.set_ylim(y - 0.5, -0.5)
    ax.tick_params(axis="x", labelsize=7)
    ax.grid(axis="y", visible=False)
