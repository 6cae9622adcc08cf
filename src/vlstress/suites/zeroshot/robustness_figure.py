"""The classic effective-robustness scatter: shifted vs ID accuracy on transformed axes.

Why this layout: on logit/probit axes the baseline models fall on a straight line, so a
model above the line is effectively robust and its vertical gap is visible at a glance.
One panel per shift. Baselines are grey points, the fitted line is solid, y = x is
dashed (no accuracy lost to the shift); this run's models (those that are not baselines)
and any highlighted ones are coloured and named in the legend (names are long: at the points they
would cover the lines), and up to LABELLED_MODELS of them carry their ER in percentage points at
their point, the labels moved apart and off the points by adjustText (more would bury the points);
models on the same point are concentric rings (the
first drawn the largest), so that none hides another. Baselines that are not rows of the results
(imagenet-testbed's models, `clouds`) are a grey cloud, n in the legend; a line's bootstrap band
(`bands`) is shaded around it; `titles` names each panel's line under the shift.
Ticks sit at their transformed positions but read in accuracy %. Artists carry a `gid`
(`baselines`, `cloud`, `band`, `fit`, `identity`, `model:<name>`) so tests and tools can find
them. With a `families` mapping, each family of model (image-text open_clip models, supervised
ImageNet classifiers of timm) has its own marker shape, named in the legend (`family:<kind>`).
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from vlstress.suites.zeroshot.robustness import FIT_TITLES, Band, Line, get_transform  # noqa: E402

BASELINE_COLOR = "0.6"
PANELS_PER_ROW = 3
# tick candidates in order of preference: a tick is kept if it is not too close to a kept one
TICK_ACCURACIES = (0.5, 0.1, 0.9, 0.01, 0.99, 0.3, 0.7, 0.2, 0.8, 0.05, 0.95, 0.02, 0.98, 0.4, 0.6)
LINEAR_TICKS = tuple(i / 10 for i in range(11))
MIN_TICK_GAP = 1 / 16  # of the axis span
ITERATIONS = 500  # of adjustText's label placement (it stops earlier once no label overlaps)
# up to this many coloured models carry their ER at their points (all are named in the legend);
# more labels would bury the points
LABELLED_MODELS = 8
CLOUD_LABEL = "published baselines"
# marker and legend title of each family of model (vlstress.embedding.models.model_kind)
FAMILIES = {
    "open_clip": ("o", "image-text (open_clip)"),
    "timm": ("s", "supervised ImageNet (timm)"),
}


@dataclass(frozen=True)
class Labels:
    """A panel's model labels and every point they must keep clear of."""

    texts: list[Text]
    x: np.ndarray  # every point of the panel
    y: np.ndarray
    target_x: list[float]  # the point each label names
    target_y: list[float]

    def place(self, ax: plt.Axes) -> None:
        """Move the labels apart and off the points (adjustText), each tied to its point by a thin
        line. Bounded by iterations, not adjustText's default of one second of wall-clock time:
        its start is seeded, so the same figure comes out every time, however busy the CPU."""
        from adjustText import adjust_text

        if self.texts:
            adjust_text(
                self.texts,
                x=self.x,
                y=self.y,
                target_x=self.target_x,
                target_y=self.target_y,
                ax=ax,
                expand=(1.2, 1.6),
                force_text=(0.5, 1.0),
                force_explode=(0.5, 1.0),
                iter_lim=ITERATIONS,
                arrowprops={"arrowstyle": "-", "color": "0.45", "lw": 0.6},
            )


def coloured_models(results: pd.DataFrame, highlight: Sequence[str] = ()) -> list[str]:
    """The models drawn in colour: the highlighted ones in the given order, then every non-baseline
    model."""
    others = sorted(set(results.loc[~results["baseline"], "model"]))
    return list(dict.fromkeys([*highlight, *others]))


def _ticks(transform: str, low: float, high: float) -> tuple[list[float], list[str]]:
    """Tick positions on the transformed axis inside [low, high], labelled in accuracy %, no two
    closer than MIN_TICK_GAP of the span."""
    axis = get_transform(transform)
    candidates = LINEAR_TICKS if transform == "linear" else TICK_ACCURACIES
    spacing = (high - low) * MIN_TICK_GAP
    kept: dict[float, float] = {}
    for accuracy in candidates:
        position = float(axis.to_axis(accuracy))
        if low <= position <= high and all(abs(position - other) >= spacing for other in kept):
            kept[position] = accuracy
    positions = sorted(kept)
    return positions, [f"{100 * kept[p]:g}" for p in positions]


def _ring_sizes(x: np.ndarray, y: np.ndarray, size: float = 42.0) -> list[float]:
    """Marker areas: models on the same point are drawn as concentric rings (the first drawn the
    largest), so that none hides another."""
    points = [(round(float(a), 9), round(float(b), 9)) for a, b in zip(x, y)]
    later = [points[i + 1 :].count(p) for i, p in enumerate(points)]
    return [size * (1 + 1.3 * n) ** 2 for n in later]


def _panel(
    ax: plt.Axes,
    rows: pd.DataFrame,
    line: Line,
    colours: dict[str, tuple],
    shift: str,
    id_name: str,
    names: dict[str, str],
    families: dict[str, str],
    cloud: pd.DataFrame | None = None,
    band: Band | None = None,
    title: str | None = None,
    labelled: bool = True,
) -> Labels:
    axis = get_transform(line.transform)
    x = axis.to_axis(rows["id_accuracy"].to_numpy(), line.epsilon)
    y = axis.to_axis(rows["shifted_accuracy"].to_numpy(), line.epsilon)
    coloured = rows["model"].isin(list(colours)).to_numpy()
    grey = ~coloured & rows["baseline"].to_numpy(dtype=bool)
    every_x, every_y = x, y
    if cloud is not None:  # published baselines: the grey cloud the line is fitted on
        cx = axis.to_axis(cloud["id_accuracy"].to_numpy(), line.epsilon)
        cy = axis.to_axis(cloud["shifted_accuracy"].to_numpy(), line.epsilon)
        ax.scatter(
            cx,
            cy,
            s=14,
            color=BASELINE_COLOR,
            alpha=0.8,
            linewidths=0,
            label=CLOUD_LABEL,
            gid="cloud",
            zorder=2,
        )
        every_x, every_y = np.concatenate([x, cx]), np.concatenate([y, cy])
    others = ~coloured & ~grey  # neither fitted nor labelled (e.g. published CLIP models)
    if others.any():
        ax.scatter(
            x[others],
            y[others],
            s=14,
            facecolors="none",
            edgecolors=BASELINE_COLOR,
            linewidths=0.8,
            label="other models (not fitted)",
            gid="others",
            zorder=2,
        )
    if grey.any():  # (a line over the run's own models has them all in colour)
        ax.scatter(
            x[grey],
            y[grey],
            s=14,
            color=BASELINE_COLOR,
            alpha=0.8,
            linewidths=0,
            label=f"baselines ({line.n} fitted)",
            gid="baselines",
            zorder=2,
        )
    low = float(min(every_x.min(), every_y.min()))
    high = float(max(every_x.max(), every_y.max()))
    pad = 0.05 * max(high - low, 1e-3)
    low, high = low - pad, high + pad
    grid = np.array([low, high])
    if band is not None:
        ax.fill_between(
            band.axis,
            band.low,
            band.high,
            color="0.25",
            alpha=0.3,
            linewidth=0,
            label=(
                f"{100 * band.confidence:g}% band (bootstrap over the baselines, "
                f"{band.n_resamples} resamples)"
            ),
            gid="band",
            zorder=2.5,
        )
    ax.plot(
        grid,
        line.slope * grid + line.intercept,
        color="0.2",
        linewidth=1.4,
        label=f"{FIT_TITLES[line.fit]} fit",
        gid="fit",
        zorder=3,
    )
    ax.plot(
        grid,
        grid,
        color="0.2",
        linewidth=1.0,
        linestyle="--",
        label="y = x",
        gid="identity",
        zorder=1,
    )
    texts = []
    middle = (low + high) / 2
    sizes = _ring_sizes(x[coloured], y[coloured])
    for xi, yi, size, row in zip(
        x[coloured], y[coloured], sizes, rows[coloured].itertuples(index=False)
    ):
        ax.scatter(
            [xi],
            [yi],
            s=size,
            marker=FAMILIES.get(families.get(row.model, ""), ("o",))[0],
            color=colours[row.model],
            edgecolors="black",
            linewidths=0.6,
            label=row.model,
            gid=f"model:{row.model}",
            zorder=4,
        )
        if not labelled:  # named in the legend instead
            continue
        # no "-0.0": a value that rounds to zero reads +0.0
        er = row.effective_robustness_pp if round(row.effective_robustness_pp, 1) != 0 else 0.0
        # start a quarter of the way to the panel's centre, where there is room (points crowd
        # the corners); adjustText then moves the labels apart
        text = ax.text(
            xi + 0.25 * (middle - xi),
            yi + 0.25 * (middle - yi),
            f"ER {er + 0.0:+.1f} pp",
            ha="center",
            va="center",
            fontsize="x-small",
            color=colours[row.model],
            zorder=3.5,
            bbox={"boxstyle": "round,pad=0.1", "fc": "white", "alpha": 0.7, "lw": 0},
        )
        text.set_in_layout(False)  # placed after the layout, inside the panel
        texts.append(text)
    ax.set_xlim(low, high)
    ax.set_ylim(low, high)
    positions, labels = _ticks(line.transform, low, high)
    ax.set_xticks(positions, labels)
    ax.set_yticks(positions, labels)
    ax.set_title(
        shift if title is None else f"{shift}\n" + textwrap.fill(f"line: {title}", 38),
        fontsize="small",
    )
    ax.set_xlabel(f"{id_name} accuracy (%)")
    ax.set_ylabel(f"{shift} accuracy (%)")
    return Labels(texts, x, y, list(x[coloured]), list(y[coloured]))


def _legend_entries(axes, colours: dict[str, tuple], names, clouds) -> list:
    """(handle, label) of every series of the panels, once each: the published baselines with
    their n (the range over the panels), and each model by its name."""
    seen: dict[str, object] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(label, handle)
    keep = []
    for label, handle in seen.items():
        if label in colours:
            keep.append((handle, names.get(label, label)))
            continue
        if label == CLOUD_LABEL:
            sizes = sorted({len(cloud) for cloud in clouds.values()})
            n = f"{sizes[0]}" if len(sizes) == 1 else f"{sizes[0]}–{sizes[-1]}"
            label = f"{CLOUD_LABEL} (n = {n}; per panel in its title)"
        keep.append((handle, label))
    return keep


def draw(
    results: pd.DataFrame,
    lines: dict[str, Line],
    highlight: Sequence[str] = (),
    id_name: str = "ID",
    caption: str | None = None,
    names: dict[str, str] | None = None,
    families: dict[str, str] | None = None,
    clouds: dict[str, pd.DataFrame] | None = None,
    bands: dict[str, Band] | None = None,
    titles: dict[str, str] | None = None,
) -> plt.Figure:
    """One panel per shift of `lines`; `results` is the frame of
    `robustness.effective_robustness`; `names`: model -> the label shown (default: the model);
    `families`: model -> its kind, one marker shape per kind (default: circles); `clouds`: shift ->
    published baselines (id_accuracy, shifted_accuracy) drawn as a grey cloud (`gid` `cloud`);
    `bands`: shift -> the line's bootstrap band (`band`); `titles`: shift -> the line, named under
    the panel's title. Coloured models are named in the legend; up to LABELLED_MODELS carry their
    ER at their points."""
    shifts = list(lines)
    first = lines[shifts[0]]
    names, clouds, bands, titles = names or {}, clouds or {}, bands or {}, titles or {}
    models = coloured_models(results, highlight)
    labelled = len(models) <= LABELLED_MODELS
    palette = sns.color_palette("colorblind" if len(models) <= 10 else "husl", max(len(models), 1))
    colours = {model: palette[i % len(palette)] for i, model in enumerate(models)}
    ncols = min(PANELS_PER_ROW, len(shifts))
    nrows = math.ceil(len(shifts) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 4.6 * nrows), squeeze=False)
    placed = []
    for ax, shift in zip(axes.flat, shifts):
        labels = _panel(
            ax,
            results[results["shift"] == shift],
            lines[shift],
            colours,
            shift,
            id_name,
            names,
            families or {},
            clouds.get(shift),
            bands.get(shift),
            titles.get(shift),
            labelled,
        )
        placed.append((ax, labels))
    for ax in list(axes.flat)[len(shifts) :]:
        ax.set_axis_off()
    keep = _legend_entries(list(axes.flat)[: len(shifts)], colours, names, clouds)
    kinds = families or {}
    drawn = sorted({kinds[model] for model in models if model in kinds})
    if len(drawn) > 1:  # the shapes need a key only when there is more than one
        from matplotlib.lines import Line2D

        for kind in drawn:
            marker, title = FAMILIES.get(kind, ("o", kind))
            proxy = Line2D([], [], marker=marker, linestyle="", color="0.3", markersize=6)
            proxy.set_gid(f"family:{kind}")
            keep.append((proxy, title))
    # beside the panels, never over a point or its label
    axes.flat[ncols - 1].legend(
        *zip(*keep),
        loc="upper left",
        bbox_to_anchor=(1.02, 1.0),
        fontsize="x-small",
        frameon=False,
        ncols=max(1, math.ceil(len(keep) / (24 * nrows))),
    )
    title = (
        f"Effective robustness: {first.transform} axes, {FIT_TITLES[first.fit]} fit; each panel "
        "names the baselines its line is fitted over"
        if titles
        else f"Effective robustness: {first.transform} axes, {FIT_TITLES[first.fit]} fit over "
        "baseline models"
    )
    fig.suptitle(textwrap.fill(title, 40 * ncols))  # one panel: two lines, inside the figure
    fig.tight_layout()
    for ax, labels in placed:  # in the final layout: label room is measured on screen
        labels.place(ax)
    if caption:
        fig.text(
            0.01,
            0.0,
            textwrap.fill(caption, 40 * ncols),
            ha="left",
            va="top",
            fontsize="xx-small",
            color="0.4",
        )
    return fig
