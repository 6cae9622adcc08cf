"""Bootstrap intervals of the corruption summaries (vlstress.suites.zeroshot.corruption_error): mCA,
mCE and relative mCE, from the records' per-image outcomes.

Every corrupted set is a copy of the same test images, so one resample of image indices applies
to every (corruption, severity), to the clean set and to the baseline model alike: the images are
the unit, and a model's mCE and the baseline's errors it divides by move together (a paired
bootstrap, `paired=True`). The statistics recompute the table's values from the resampled
correctness, so on all the images they give the table's numbers; the interval is a seeded BCa
bootstrap (`report.intervals.bootstrap_interval`: percentile above 5,000 images, none under 10 or
when every resample gives one value). Resamples are drawn in batches, so a grid of 95 corruption
sets of 50,000 images stays within memory.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from vlstress.outcomes import Outcomes, Resampling
from vlstress.record import Record
from vlstress.report.intervals import DEGENERATE, bootstrap_interval

# resampled booleans held at once: (cells) x (batch) x (images)
MEMORY_ITEMS = 50_000_000
METRICS = ("mCA", "mCE", "relative_mCE")
# a ratio's bootstrap also fails when a resample leaves a baseline's error sum (or drop) at 0
UNDEFINED = (
    "every resample gives the same value, or some leave a corruption's baseline error (or drop "
    "from clean) at 0, where CE is undefined"
)


@dataclass(frozen=True)
class Grid:
    """A model's per-image correctness: `cells` columns, one per (corruption, severity) in the
    order `Cells` lists them, then the clean set (None: no clean outcomes)."""

    correct: np.ndarray  # (images, cells), bool
    clean: np.ndarray | None  # (images,), bool


@dataclass(frozen=True)
class Cells:
    """The (corruption, severity) cells of the grid and which corruption each belongs to."""

    cells: tuple[tuple[str, int], ...]

    @property
    def corruptions(self) -> list[str]:
        return list(dict.fromkeys(c for c, _ in self.cells))

    def grouping(self) -> np.ndarray:
        """(corruptions, cells) one-hot: which cells a corruption's sum runs over."""
        names = self.corruptions
        out = np.zeros((len(names), len(self.cells)))
        for j, (name, _) in enumerate(self.cells):
            out[names.index(name), j] = 1.0
        return out


def grid_of(
    blocks: Mapping[tuple[str, int], Outcomes], clean: Outcomes | None, cells: Cells
) -> Grid | None:
    """A model's grid from the outcomes of its corruption records (by (corruption, severity)) and
    of its clean record; None when a cell has no outcomes or the images are not the same ones in
    the same order (their true classes differ)."""
    if any(cell not in blocks for cell in cells.cells):
        return None
    source = "of a corruption record"
    labels = [blocks[cell].column("label", source) for cell in cells.cells]
    if any(len(lab) != len(labels[0]) or not np.array_equal(lab, labels[0]) for lab in labels):
        return None
    correct = np.stack([blocks[cell].column("correct", source) for cell in cells.cells], axis=1)
    clean_correct = None
    if clean is not None:
        clean_labels = clean.column("label", "of a zero-shot record")
        if np.array_equal(clean_labels, labels[0]):
            clean_correct = clean.column("correct", "of a zero-shot record").astype(bool)
    return Grid(correct.astype(bool), clean_correct)


def _errors(correct: np.ndarray) -> np.ndarray:
    """Error (%) per cell: `correct` has cells on axis 0 and images on the last axis (scipy's
    resamples insert their axis between)."""
    return 100.0 * (1.0 - correct.mean(axis=-1))


def _ratio_mean(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """100 x the mean over corruptions (axis 0) of numerator / denominator; NaN where a
    denominator is 0 (an undefined CE, as the table leaves it)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(denominator != 0, numerator / denominator, np.nan)
    return 100.0 * ratio.mean(axis=0)


def resamplings(model: Grid, baseline: Grid | None, cells: Cells) -> dict[str, Resampling]:
    """Metric -> what a bootstrap resamples for it: mCA from the model alone; mCE and relative mCE
    (this one needs both clean sets) with the baseline's images, resampled together."""
    group = cells.grouping()
    k = len(cells.cells)

    def mca(correct: np.ndarray, axis: int = -1) -> np.ndarray:
        return (100.0 - _errors(correct)).mean(axis=0)

    found = {"mCA": Resampling((model.correct,), mca, vectorized=True)}
    if baseline is None or len(baseline.correct) != len(model.correct):
        return found

    def mce(mine: np.ndarray, base: np.ndarray, axis: int = -1) -> np.ndarray:
        sums = np.tensordot(group, _errors(mine), axes=(1, 0))
        return _ratio_mean(sums, np.tensordot(group, _errors(base), axes=(1, 0)))

    found["mCE"] = Resampling((model.correct, baseline.correct), mce, vectorized=True)
    if (
        model.clean is not None
        and baseline.clean is not None
        and len(model.clean) == len(baseline.clean) == len(model.correct)
    ):
        clean_model, clean_base = model.clean, baseline.clean

        def relative(mine: np.ndarray, base: np.ndarray, axis: int = -1) -> np.ndarray:
            own, ref = _errors(mine), _errors(base)
            # the clean set is the last cell: each corruption's error minus the clean error
            numerator = np.tensordot(group, own[:k] - own[k:], axes=(1, 0))
            return _ratio_mean(numerator, np.tensordot(group, ref[:k] - ref[k:], axes=(1, 0)))

        with_clean = (
            np.column_stack([model.correct, clean_model]),
            np.column_stack([baseline.correct, clean_base]),
        )
        found["relative_mCE"] = Resampling(with_clean, relative, vectorized=True)
    return found


def intervals(
    grids: Mapping[str, Grid],
    baseline: str | None,
    cells: Cells,
    confidence: float,
    n_resamples: int,
    seed: int,
) -> dict[str, dict[str, tuple[float, float, str]]]:
    """Model -> metric -> (lo, hi, method or why there is none), for every model with a grid."""
    out: dict[str, dict[str, tuple[float, float, str]]] = {}
    base = grids.get(baseline) if baseline is not None else None
    for model, grid in grids.items():
        width = grid.correct.shape[1] + 1
        batch = max(1, MEMORY_ITEMS // (width * max(len(grid.correct), 1)))
        out[model] = {}
        for metric, resampling in resamplings(grid, base, cells).items():
            lo, hi, why = bootstrap_interval(resampling, confidence, n_resamples, seed, batch=batch)
            if why == DEGENERATE and metric != "mCA":
                why = UNDEFINED
            out[model][metric] = (lo, hi, why)
    return out


def cells_of(top1_cells: Iterable[tuple[Any, Any]]) -> Cells:
    """The cells in the table's order: corruption, then severity."""
    return Cells(tuple(sorted(dict.fromkeys((str(c), int(s)) for c, s in top1_cells))))


def grids_from(
    found: Sequence[tuple[object, Record]],
    blocks: Mapping[tuple, list[Outcomes]],
    cells: Cells,
) -> dict[str, Grid]:
    """Model -> its grid, from the run's records and their outcomes (`report.items.case_outcomes`:
    case -> blocks): its corruption records by (corruption, severity), and its zero-shot record
    of the set they corrupt (a corrupted set is named `<set>-c-<corruption>`). A record averaged
    over replicate seeds (several blocks) or without outcomes leaves its model out."""
    from vlstress.report.items import case_of

    corrupted: dict[str, dict[tuple[str, int], Outcomes]] = {}
    sources: dict[str, set[str]] = {}
    zeroshot: dict[tuple[str, str], Outcomes] = {}
    for _, record in found:
        found_blocks = blocks.get(case_of(record), [])
        if len(found_blocks) != 1:
            continue
        model, name = str(record.model["slug"]), str(record.dataset.get("name"))
        if record.task == "corruption":
            corruption = str(record.condition["corruption"])
            cell = (corruption, int(record.condition["severity"]))
            corrupted.setdefault(model, {})[cell] = found_blocks[0]
            sources.setdefault(model, set()).add(name.removesuffix(f"-c-{corruption}"))
        elif record.task == "zeroshot":
            zeroshot[(model, name)] = found_blocks[0]
    out = {}
    for model, by_cell in corrupted.items():
        source = sources[model]
        clean = zeroshot.get((model, next(iter(source)))) if len(source) == 1 else None
        grid = grid_of(by_cell, clean, cells)
        if grid is not None:
            out[model] = grid
    return out


def with_intervals(
    table: pd.DataFrame, found: Mapping[str, Mapping[str, tuple[float, float, str]]]
) -> pd.DataFrame:
    """The corruption table with `<metric>_lo`, `<metric>_hi` for mCA, mCE and relative mCE (NaN
    where there is none) and `interval`: the method, or why a metric has none."""
    table = table.copy()
    for metric in METRICS:
        table[f"{metric}_lo"] = [
            found.get(m, {}).get(metric, (np.nan,) * 3)[0] for m in table.model
        ]
        table[f"{metric}_hi"] = [
            found.get(m, {}).get(metric, (np.nan,) * 3)[1] for m in table.model
        ]
    table["interval"] = [_methods(found.get(m, {})) for m in table["model"]]
    return table


def _methods(found: Mapping[str, tuple[float, float, str]]) -> str:
    """`BCa bootstrap`, or each metric's reason where it has none: `mCE: every resample ...`."""
    if not found:
        return "no per-image outcomes of every corruption set"
    methods = {why for lo, _, why in found.values() if np.isfinite(lo)}
    none = [f"{metric}: {why}" for metric, (lo, _, why) in found.items() if not np.isfinite(lo)]
    return "; ".join([*(f"{m} bootstrap" for m in sorted(methods)), *none])
