"""Reliability diagrams before / after temperature scaling, drawn by `vlstress calibrate` (it needs
more than the summary holds). Each diagram has the confidence histogram under it (images per bin,
as Guo et al. 2017 draw it), so a bin's accuracy can be weighed by how many images it holds; the
title says where T was fitted and flags a T on the search bound or one that worsens the held-out
ID NLL. A bin's accuracy is a share of its images: each bar carries its 95% Wilson interval, which
a note says."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from vlstress.report.figures import _add_notes
from vlstress.report.intervals import wilson_percent
from vlstress.suites.calibration.calibration import ReliabilityBins

NOTE = (
    "error bars: 95% Wilson interval of each bin's accuracy over the images in the bin (the "
    "histogram under it)"
)

SERIES = (("raw", "C3", -0.22), ("temperature-scaled", "C0", 0.22))


def _centres(bins: ReliabilityBins):
    width = float(bins.edges[1] - bins.edges[0])
    return bins.edges[:-1] + width / 2, width


def _reliability_panel(
    ax,
    before: ReliabilityBins,
    after: ReliabilityBins,
    title: str,
    ece_before: float,
    ece_after: float,
) -> None:
    centres, width = _centres(before)
    for bins, value, (name, colour, offset) in zip(
        (before, after), (ece_before, ece_after), SERIES
    ):
        filled = bins.counts > 0
        accuracy = bins.accuracy[filled]
        lo, hi = wilson_percent(100.0 * accuracy, bins.counts[filled])
        ax.bar(
            centres[filled] + offset * width,
            accuracy,
            width=0.44 * width,
            color=colour,
            alpha=0.75,
            label=f"{name} (ECE {value:.1f}%)",
            yerr=np.clip([accuracy - lo / 100.0, hi / 100.0 - accuracy], 0.0, None),
            error_kw={"ecolor": "0.2", "elinewidth": 0.8, "capsize": 1.5},
        )
    ax.plot([0, 1], [0, 1], color="0.3", linestyle="--", linewidth=1.0, label="perfect calibration")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_title(title, fontsize="medium")
    ax.legend(loc="upper left", fontsize="x-small", frameon=True)
    ax.tick_params(axis="x", labelbottom=False)


def _histogram_panel(ax, before: ReliabilityBins, after: ReliabilityBins) -> None:
    """Images per confidence bin, raw and scaled (the same bins as the diagram above)."""
    centres, width = _centres(before)
    for bins, (name, colour, offset) in zip((before, after), SERIES):
        ax.bar(
            centres + offset * width,
            bins.counts,
            width=0.44 * width,
            color=colour,
            alpha=0.75,
            label=name,
        )
    ax.set_xlim(0, 1)
    ax.set_ylim(0, max(1.0, float(max(before.counts.max(), after.counts.max()))) * 1.15)
    ax.set_xlabel("confidence (top-1 softmax)")


def fit_flags(temperature: float, at_bound: bool, worsens: tuple[float, float] | None) -> list[str]:
    """The warnings a reliability figure prints under its title: T on the search bound; T raising
    the held-out ID NLL (`worsens` = (NLL at T = 1, NLL at T), or None when it does not)."""
    flags = []
    if at_bound:
        flags.append(
            f"T = {temperature:.3g} is on the search bound [0.01, 100]: no interior NLL optimum"
        )
    if worsens is not None:
        flags.append(
            f"T worsens the held-out ID NLL ({worsens[0]:.3f} at T = 1 -> {worsens[1]:.3f})"
        )
    return flags


def reliability_figure(
    model_label: str,
    temperature: float,
    panels: list[tuple[str, ReliabilityBins, ReliabilityBins, float, float]],
    flags: list[str] | None = None,
) -> plt.Figure:
    """Reliability diagrams, each over its confidence histogram: per panel (title, bins raw, bins
    scaled, ECE raw %, ECE scaled %); `flags`: warnings about the fit (`fit_flags`), printed under
    the title."""
    flags = list(flags or [])
    fig, axes = plt.subplots(
        2,
        len(panels),
        figsize=(4.4 * len(panels), 5.6 + 0.25 * len(flags)),
        squeeze=False,
        sharex="col",
        gridspec_kw={"height_ratios": (3.0, 1.0)},
    )
    for column, (title, before, after, ece_before, ece_after) in enumerate(panels):
        _reliability_panel(axes[0][column], before, after, title, ece_before, ece_after)
        _histogram_panel(axes[1][column], before, after)  # its own y scale: set sizes differ
        if column:
            axes[0][column].tick_params(axis="y", labelleft=False)
    axes[0][0].set_ylabel("accuracy in bin")
    axes[1][0].set_ylabel("images in bin")
    title = (
        f"Reliability of {model_label}: raw logits vs T = {temperature:.3g}\n"
        "T fitted on the fit split of the ID set, scored on its held-out rest and the shifted sets"
    )
    title += "".join(f"\nWarning: {flag}" for flag in flags)
    fig.suptitle(title, fontsize="medium")
    fig.tight_layout(h_pad=0.3)
    _add_notes(fig, [NOTE])
    return fig
