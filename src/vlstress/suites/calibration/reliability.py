"""Reliability diagrams before / after temperature scaling, drawn by `vlstress calibrate` (it needs
more than the summary holds)."""

from __future__ import annotations

import matplotlib.pyplot as plt

from vlstress.suites.calibration.calibration import ReliabilityBins


def _reliability_panel(
    ax,
    before: ReliabilityBins,
    after: ReliabilityBins,
    title: str,
    ece_before: float,
    ece_after: float,
) -> None:
    width = float(before.edges[1] - before.edges[0])
    centres = before.edges[:-1] + width / 2
    for bins, colour, name, value, offset in (
        (before, "C3", "raw", ece_before, -0.22),
        (after, "C0", "temperature-scaled", ece_after, 0.22),
    ):
        filled = bins.counts > 0
        ax.bar(
            centres[filled] + offset * width,
            bins.accuracy[filled],
            width=0.44 * width,
            color=colour,
            alpha=0.75,
            label=f"{name} (ECE {value:.1f}%)",
        )
    ax.plot([0, 1], [0, 1], color="0.3", linestyle="--", linewidth=1.0, label="perfect calibration")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("confidence (top-1 softmax)")
    ax.set_title(title, fontsize="medium")
    ax.legend(loc="upper left", fontsize="x-small", frameon=True)


def reliability_figure(
    model_label: str,
    temperature: float,
    panels: list[tuple[str, ReliabilityBins, ReliabilityBins, float, float]],
) -> plt.Figure:
    """Reliability diagrams: per panel (title, bins raw, bins scaled, ECE raw %, ECE scaled %)."""
    fig, axes = plt.subplots(
        1, len(panels), figsize=(4.4 * len(panels), 4.2), squeeze=False, sharey=True
    )
    for ax, (title, before, after, ece_before, ece_after) in zip(axes[0], panels):
        _reliability_panel(ax, before, after, title, ece_before, ece_after)
    axes[0][0].set_ylabel("accuracy in bin")
    fig.suptitle(
        f"Reliability of {model_label}: raw logits vs T = {temperature:.3g} fitted on held-out "
        "ID images"
    )
    fig.tight_layout()
    return fig
