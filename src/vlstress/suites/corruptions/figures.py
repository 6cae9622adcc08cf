"""Figures of the corruptions suite from the long summary table:

- corruption_heatmap: top-1 per (corruption, severity), one panel per model;
- corruption_severity: top-1 against severity, one line per corruption (severity 0 = clean).
"""

from __future__ import annotations

import pandas as pd
import seaborn as sns

from vlstress.report.figures import FigureResult, _tick, model_panels
from vlstress.report.figures import clean_name as _clean_name
from vlstress.report.figures import no_records as _none
from vlstress.report.figures import task_rows as _task


def corruption_heatmap(table: pd.DataFrame) -> FigureResult:
    data = _task(table, "corruption")
    if data.empty:
        return _none("Accuracy under corruptions", "corruption")
    labels = list(dict.fromkeys(data["label"]))
    corruptions = list(dict.fromkeys(data["corruption"]))
    severities = sorted(data["severity"].unique())
    fig, axes, firsts, lasts = model_panels(
        len(labels),
        0.9 * len(severities) + 1.5,
        0.5 * len(corruptions) + 1.8,
        extra_width=1.2,
        sharey=False,
    )
    vmax = max(1.0, float(data["value"].max()))
    for ax, label in zip(axes, labels):
        grid = data[data["label"] == label].pivot_table(
            index="corruption", columns="severity", values="value", aggfunc="mean"
        )
        grid = grid.reindex(index=corruptions, columns=severities)
        sns.heatmap(
            grid,
            ax=ax,
            annot=True,
            fmt=".1f",
            cmap="viridis",
            vmin=0,
            vmax=vmax,
            cbar=any(ax is last for last in lasts),
            cbar_kws={"label": "top-1 (%)"},
            # the corruption names once, on the left, read horizontally
            yticklabels=[c.replace("_", " ") for c in corruptions]
            if any(ax is first for first in firsts)
            else False,
        )
        ax.tick_params(axis="y", labelrotation=0)
        ax.set_title(_tick(label), fontsize="medium")
        ax.set_xlabel("severity")
        ax.set_ylabel("corruption" if any(ax is first for first in firsts) else "")
    fig.suptitle(f"Top-1 accuracy under corruptions ({_clean_name(data)})")
    fig.tight_layout()
    return fig, []


def corruption_severity(table: pd.DataFrame) -> FigureResult:
    data = _task(table, "corruption")
    if data.empty:
        return _none("Accuracy against severity", "corruption")
    clean = _task(table, "corruption", "top1_clean")
    labels = list(dict.fromkeys(data["label"]))
    fig, axes, firsts, lasts = model_panels(len(labels), 4.2, 3.6)
    palette = dict(
        zip(
            dict.fromkeys(data["corruption"]),
            sns.color_palette("colorblind", data["corruption"].nunique()),
        )
    )
    for ax, label in zip(axes, labels):
        rows = data[data["label"] == label]
        clean_value = clean.loc[clean["label"] == label, "value"]
        for name, group in rows.groupby("corruption", sort=False):
            group = group.sort_values("severity")
            x = [0, *group["severity"]] if len(clean_value) else list(group["severity"])
            y = (
                [float(clean_value.iloc[0]), *group["value"]]
                if len(clean_value)
                else list(group["value"])
            )
            ax.plot(x, y, marker="o", label=name, color=palette[name])
        ax.set_title(_tick(label), fontsize="medium")
        ax.set_xlabel("severity (0 = clean)")
        ax.set_xticks(range(0, 6))
    for ax in firsts:
        ax.set_ylabel("top-1 accuracy (%)")
    lasts[0].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize="small")
    fig.suptitle(f"Top-1 accuracy against corruption severity ({_clean_name(data)})")
    fig.tight_layout()
    return fig, []


FIGURES = {
    "corruption_heatmap": corruption_heatmap,
    "corruption_severity": corruption_severity,
}
