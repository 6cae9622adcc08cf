"""The table (Markdown + LaTeX) and the figure of accuracy_vs_recall."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from vlstress.errors import VlstressError
from vlstress.report.figures import _add_notes, placeholder
from vlstress.report.frames import MISSING
from vlstress.suites.accuracy_vs_recall import band
from vlstress.suites.accuracy_vs_recall.correlation import DIRECTIONS, Fit
from vlstress.suites.zeroshot.robustness import EPSILON

CAPTION = (
    "Zero-shot top-1 against retrieval R@1 across models: least-squares line"
    " (R@1 = slope × top-1 + intercept, in %), the line the figure draws (least squares in"
    " logit space: logit R@1 = slope × logit top-1 + intercept, 0 and 100% clipped by half an item)"
    " and correlations (Pearson r, Spearman ρ, with p-values)"
)
COLUMNS = {
    "n_models": "models",
    "slope": "slope",
    "intercept": "intercept",
    "logit_slope": "logit slope",
    "logit_intercept": "logit intercept",
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


def count_note(table: pd.DataFrame, testset: str) -> str:
    """What each point is a share of: `top-1 over 30 images (objects); R@1 over 14 images (image →
    text), 70 captions (text → image)`, from the summary's counts."""

    def counts(rows: pd.DataFrame, column: str) -> str:
        found = sorted({int(v) for v in rows[column].dropna()})
        return "/".join(map(str, found)) or "?"

    zeroshot = table[(table["task"] == "zeroshot") & (table["dataset"] == testset)]
    i2t, t2i = (table[table["metric"] == f"{d}_R@1"] for d in DIRECTIONS)
    return (
        f"top-1 over {counts(zeroshot, 'n_images')} images ({testset}); R@1 over "
        f"{counts(i2t, 'n_images')} images ({DIRECTIONS['i2t']}), "
        f"{counts(t2i, 'n_captions')} captions ({DIRECTIONS['t2i']})"
    )


def figure(
    pairs: pd.DataFrame,
    found: list[Fit],
    testset: str,
    notes: list[str],
    epsilon: float = EPSILON,
    n_resamples: int = band.N_RESAMPLES,
    counts: str | None = None,
) -> plt.Figure:
    """One panel per retrieval direction: a point per (model, condition), per defined fit its line
    in logit space (`band`) with the 95% bootstrap band over the models; a point shared by k models
    is marked ×k. `epsilon`: the clip of 0 and 100% before the logit; `counts`: what each point is
    a share of (`count_note`)."""
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
    bands, unbanded = 0, []
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
            if item.direction != direction or math.isnan(item.slope):
                continue
            points = data[(data["task"] == item.task) & (data["condition"] == item.condition)]
            try:
                drawn, why = band.curve(
                    points["accuracy"].to_numpy(float),
                    points["recall"].to_numpy(float),
                    epsilon,
                    n_resamples,
                )
            except VlstressError as exc:  # no logit line (e.g. every top-1 clipped alike)
                unbanded.append(f"{DIRECTIONS[direction]} {item.condition}: {exc}")
                continue
            colour = palette[item.condition]
            ax.plot(drawn.x, drawn.y, color=colour, linewidth=1.2, zorder=2.5, gid="line")
            if drawn.low is None or drawn.high is None:
                unbanded.append(f"{DIRECTIONS[direction]} {item.condition}: {why}")
                continue
            ax.fill_between(
                drawn.x, drawn.low, drawn.high, color=colour, alpha=0.12, linewidth=0, gid="band"
            )
            bands += 1
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
    if counts:
        notes.append(counts)
    if bands or unbanded:
        notes.append(
            "lines: least squares in logit space (logit R@1 against logit top-1, as imagenet-"
            f"testbed; 0 and 100% clipped by half an item, {100 * epsilon:.2g}%), so curved here"
            + (
                f"; bands: {100 * band.CONFIDENCE:g}% percentile bootstrap over the models "
                f"({n_resamples} resamples, seed {band.SEED}, refit each)"
                if bands
                else ""
            )
        )
    if unbanded:
        notes.append("no band: " + "; ".join(unbanded))
    if coincide:
        notes.append("×k: k models on the same point (the same top-1 and R@1)")
    _add_notes(fig, notes)
    return fig
