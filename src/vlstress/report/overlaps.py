"""Text that collides in a drawn figure: tick labels overlapping each other (slanted ones by their
turned boxes) or their axis label, annotations under the legend. What a reader would see as a
smudge; figures are saved with a tight box, so nothing runs off them. `tests/test_figures.py`
runs it on every registered figure."""

from __future__ import annotations

import math
from itertools import combinations
from typing import Any

import matplotlib.pyplot as plt

PAD = 0.5  # pixels a box may touch another before they count as overlapping


def _visible(text: Any) -> bool:
    return bool(text.get_visible() and text.get_text().strip())


def _boxes(texts: list[Any], renderer: Any) -> list[tuple[str, Any]]:
    return [(t.get_text(), t.get_window_extent(renderer)) for t in texts if _visible(t)]


def _hit(a: Any, b: Any) -> bool:
    return min(a.x1, b.x1) - max(a.x0, b.x0) > PAD and min(a.y1, b.y1) - max(a.y0, b.y0) > PAD


def _rotated_hit(a: Any, b: Any, renderer: Any) -> bool:
    """Whether two texts turned by the same angle overlap: their boxes along and across the
    text direction (the screen boxes of slanted labels overlap though the glyphs do not)."""
    angle = math.radians(a.get_rotation())
    along, across = (math.cos(angle), math.sin(angle)), (-math.sin(angle), math.cos(angle))
    sizes = []
    centres = []
    for text in (a, b):
        width, height, _ = renderer.get_text_width_height_descent(
            text.get_text(), text.get_fontproperties(), ismath=False
        )
        sizes.append((width, height))
        box = text.get_window_extent(renderer)
        centres.append(((box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2))
    dx, dy = centres[1][0] - centres[0][0], centres[1][1] - centres[0][1]
    gap_along = abs(dx * along[0] + dy * along[1]) - (sizes[0][0] + sizes[1][0]) / 2
    gap_across = abs(dx * across[0] + dy * across[1]) - (sizes[0][1] + sizes[1][1]) / 2
    return gap_along < -PAD and gap_across < -PAD


def overlapping_text(fig: plt.Figure) -> list[str]:
    """Every collision of text in `fig`, as readable lines (empty when none)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    found = []
    for ax in fig.axes:
        for axis, label in ((ax.xaxis, ax.xaxis.label), (ax.yaxis, ax.yaxis.label)):
            labels = [t for t in axis.get_ticklabels() if _visible(t)]
            ticks = _boxes(labels, renderer)
            for first, second in combinations(labels, 2):
                slanted = first.get_rotation() % 90 != 0
                if (
                    _rotated_hit(first, second, renderer)
                    if slanted
                    else _hit(first.get_window_extent(renderer), second.get_window_extent(renderer))
                ):
                    found.append(
                        f"{ax.get_title()!r}: tick labels {first.get_text()!r} and "
                        f"{second.get_text()!r} overlap"
                    )
            if _visible(label):
                box = label.get_window_extent(renderer)
                found += [
                    f"{ax.get_title()!r}: tick label {a!r} overlaps the axis label "
                    f"{label.get_text()!r}"
                    for a, box_a in ticks
                    if _hit(box_a, box)
                ]
        legend = ax.get_legend() or (fig.legends[0] if fig.legends else None)
        if legend is not None and legend.get_visible():
            box = legend.get_window_extent(renderer)
            found += [
                f"{ax.get_title()!r}: text {a!r} lies under the legend"
                for a, box_a in _boxes(list(ax.texts), renderer)
                if _hit(box_a, box)
            ]
            found += [
                f"{ax.get_title()!r}: tick label {a!r} lies under the legend"
                for a, box_a in _boxes(list(ax.get_xticklabels()), renderer)
                if _hit(box_a, box)
            ]
    return found
