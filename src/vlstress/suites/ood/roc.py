"""ROC curves of every score for one ID / OOD pair, drawn by `vlstress ood-detect`."""

from __future__ import annotations

import matplotlib.pyplot as plt
import seaborn as sns


def roc_figure(title: str, curves: dict[str, tuple[list[float], list[float], float]]) -> plt.Figure:
    """ROC curves: score -> (FPR, TPR, AUROC %)."""
    fig, ax = plt.subplots(figsize=(4.8, 4.4))
    palette = sns.color_palette("colorblind", len(curves))
    for colour, (name, (fpr, tpr, auroc)) in zip(palette, curves.items()):
        ax.plot(fpr, tpr, color=colour, label=f"{name} (AUROC {auroc:.1f}%)")
    ax.plot([0, 1], [0, 1], color="0.4", linestyle="--", linewidth=0.8)
    ax.axhline(0.95, color="0.6", linestyle=":", linewidth=0.8)
    ax.set_xlabel("false positive rate (OOD accepted as ID)")
    ax.set_ylabel("true positive rate (ID kept)")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.01)
    ax.set_title(title, fontsize="medium")
    ax.legend(loc="lower right", fontsize="x-small")
    fig.tight_layout()
    return fig
