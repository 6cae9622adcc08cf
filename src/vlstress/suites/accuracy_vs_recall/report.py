"""The table (Markdown + LaTeX) and the figure of accuracy_vs_recall."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from vlstress.report.figures import _add_notes, placeholder
from vlstress.report.frames import MISSING
from vlstress.suites.accuracy_vs_recall.correlation import DIRECTIONS, Fit

CAPTION = (
    "Zero-shot top-1 against retrieval R@1 across models: least-squares line"
    " (R@1 = slope × top-1 + intercept, in %) and correlations"
    " (Pearson r, Spearman ρ, with p-values)"
)
COLUMNS = {
    "n_models": "models",
    "slope": "slope",
    "intercept": "intercept",
    "pearson_r": "Pearson r",
    "pearson_p": "p",
    "spearman_rho": "Spearman ρ",
    "spearman_p": "p (ρ)",
}


def _cell(key: str, value: float | int) -> str:
    """Counts as they are, p-values to two significant digits, r and rho to three decimals, the
    line to two."""
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return MISSING
    if key.endswith("_p"):
        return f"{value:.2g}"
    return f"{value:.3f}" if key.endswith(("_r", "_rho")) else f"{value:.2f}"


def frame(found: list[Fit]) -> pd.DataFrame:
    """Rows (direction, condition); the cells as text (`–` where undefined)."""
    rows = []
    for item in found:
        cells = {title: _cell(key, getattr(item, key)) for key, title in COLUMNS.items()}
        rows.append({"direction": DIRECTIONS[item.direction], "condition": item.condition, **cells})
    return pd.DataFrame(rows).set_index(["direction", "condition"]) if rows else pd.DataFrame()


def figure(pairs: pd.DataFrame, found: list[Fit], testset: str, notes: list[str]) -> plt.Figure:
    """One panel per retrieval direction: a point per (model, condition), a line per defined fit;
    a point shared by k models is marked ×k."""
    if pairs.empty:
        return placeholder(
            "Top-1 against R@1", "no model has both a zero-shot top-1 and a retrieval R@1"
        )
    directions = [d for d in DIRECTIONS if d in set(pairs["direction"])]
    conditions = list(dict.fromkeys(pairs["condition"]))
    palette = dict(zip(conditions, sns.color_palette("colorblind", len(conditions))))
    fig, axes = plt.subplots(
        1, len(directions), figsize=(4.6 * len(directions) + 2.2, 4.0), squeeze=False
    )
    # earlier conditions are drawn larger: points that coincide show as concentric rings
    sizes = {
        c: 25 + 330 * (len(conditions) - i) / len(conditions) for i, c in enumerate(conditions)
    }
    coincide = False
    for ax, direction in zip(axes[0], directions):
        data = pairs[pairs["direction"] == direction]
        for condition in conditions:
            points = data[data["condition"] == condition]
            ax.scatter(
                points["accuracy"],
                points["recall"],
                s=sizes[condition],
                color=palette[condition],
                edgecolors="white",
                linewidths=0.8,
                zorder=3,
            )
            stacked = points.groupby(["accuracy", "recall"]).size()
            for (x, y), count in stacked[stacked > 1].items():  # models on one point
                ax.annotate(
                    f"×{count}",
                    (x, y),
                    xytext=(6, 4),
                    textcoords="offset points",
                    fontsize="x-small",
                    color=palette[condition],
                )
                coincide = True
        for item in found:
            if item.direction == direction and not math.isnan(item.slope):
                xs = np.linspace(data["accuracy"].min(), data["accuracy"].max(), 2)
                ax.plot(
                    xs,
                    item.slope * xs + item.intercept,
                    color=palette[item.condition],
                    linewidth=1.2,
                )
        ax.set_title(DIRECTIONS[direction])
        ax.set_xlabel(f"zero-shot top-1 on {testset} (%)")
        ax.set_ylabel("R@1 (%)")
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    handles = [
        plt.Line2D([], [], marker="o", linestyle="", color=palette[c], label=c) for c in conditions
    ]
    fig.legend(
        handles=handles,
        loc="upper left",
        bbox_to_anchor=(1.0, 0.95),
        frameon=False,
        title="condition",
    )
    fig.suptitle("Does zero-shot accuracy predict retrieval?")
    fig.tight_layout()
    notes = [*notes, f"n = {pairs['model'].nunique()} models, one point per model and condition"]
    if coincide:
        notes.append("×k: k models on the same point (the same top-1 and R@1)")
    _add_notes(fig, notes)
    return fig
