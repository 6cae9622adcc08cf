"""The figures of one suite's figure module (`vlstress figures`): which to draw, and drawing them.

A figure module's `FIGURES` maps each name to a function of the long summary table that returns
(figure, notes); each figure is saved as `<out-dir>/<name>.png` and `.pdf`, with its provenance
in the file metadata (vlstress.report.figures). A function that takes `headlines` also gets the
run's headline table (`vlstress headlines`), to draw its intervals. A model fine-tuned from a
random-init one is labelled `(random-init base)` on every figure.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from vlstress import provenance
from vlstress.errors import VlstressError
from vlstress.io import sha256_file
from vlstress.report import figures

Figures = Mapping[str, Callable[..., tuple[Any, list[str]]]]


def figure_names(available: Figures, only: list[str] | None, module: str) -> list[str]:
    """The figures `only` names (None: all of `module`), each checked to be one of
    `available`."""
    names = list(available) if only is None else only
    unknown = [n for n in names if n not in available]
    if unknown:
        raise VlstressError(
            f"unknown figure(s) {', '.join(unknown)} in {module}; known: {', '.join(available)}"
        )
    return names


def draw(
    available: Figures,
    names: list[str],
    table: Any,
    summary: Path,
    out_dir: Path,
    log: logging.Logger,
    headlines: tuple[Path, Any] | None = None,
) -> None:
    """Draw each of `names` from the summary table `table` (read from `summary`) and save it in
    `out_dir`; `log` gets each figure's notes and each file written. `headlines`: the headline
    table's path and frame, handed to the functions that take it. A model fine-tuned from a
    random-init one is labelled so (`figures.mark_random_init`)."""
    inputs = {str(summary): sha256_file(summary)}
    if headlines is not None:
        inputs[str(headlines[0])] = sha256_file(headlines[0])
    figures.setup()
    table = figures.mark_random_init(table)
    for name in names:
        draw_one = available[name]
        takes = "headlines" in inspect.signature(draw_one).parameters
        if takes and headlines is not None:
            fig, notes = draw_one(table, headlines=headlines[1])
        else:
            fig, notes = draw_one(table)
        for note in notes:
            log.info("%s: %s", name, note)
        block = provenance.build(
            "figures", {"summary": str(summary), "figure": name, "notes": notes}, inputs=inputs
        )
        figures.save(fig, out_dir / f"{name}.png", block)
        log.info("wrote %s.png/.pdf", out_dir / name)
