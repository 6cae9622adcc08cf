"""ROC curves of every score for one ID / OOD pair, drawn by `vlstress ood-detect`: each score its
own colour and dash pattern, the earlier ones wider (curves that coincide stay visible, and the
legend, below the panel, says so). The legend gives each AUROC with its 95% BCa bootstrap interval,
the in- and out-of-distribution images resampled each within itself."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import seaborn as sns

STYLES = ("-", "--", "-.", ":")


def roc_figure(
    title: str, curves: dict[str, tuple[list[float], list[float], float, float, float]]
) -> plt.Figure:
    """ROC curves: score -> (FPR, TPR, AUROC %, its 95% interval's low and high: NaN where none)."""
    fig, ax = plt.subplots(figsize=(4.8, 4.4))
    palette = sns.color_palette("colorblind", len(curves))
    seen: dict[tuple, str] = {}
    for i, (colour, (name, (fpr, tpr, auroc, lo, hi))) in enumerate(zip(palette, curves.items())):
        key = (tuple(round(float(v), 9) for v in fpr), tuple(round(float(v), 9) for v in tpr))
        same = seen.setdefault(key, name)
        bounds = f" [{lo:.1f}, {hi:.1f}]" if math.isfinite(lo) and math.isfinite(hi) else ""
        label = f"{name} (AUROC {auroc:.1f}%{bounds})" + (
            f", same curve as {same}" if same != name else ""
        )
        # own dash pattern, the earlier curves wider: a curve on top of another leaves it visible
        ax.plot(
            fpr,
            tpr,
            color=colour,
            linestyle=STYLES[i % len(STYLES)],
            linewidth=1.2 + 1.2 * (len(curves) - 1 - i),
            label=label,
        )
    ax.plot([0, 1], [0, 1], color="0.4", linestyle="--", linewidth=0.8)
    ax.axhline(0.95, color="0.6", linestyle=":", linewidth=0.8)
    ax.set_xlabel("false positive rate (OOD accepted as ID)")
    ax.set_ylabel("true positive rate (ID kept)")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.01)
    ax.set_title(title, fontsize="medium")
    # below the panel, never over a curve
    legend = ax.legend(
        loc="upper center", bbox_to_anchor=(0.5, -0.16), fontsize="x-small", frameon=False
    )
    legend.set_title("[lo, hi]: 95% BCa bootstrap interval")
    legend.get_title().set_fontsize("x-small")
    fig.tight_layout()
    return fig
