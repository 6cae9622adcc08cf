"""Intervals of mCA, mCE and relative mCE (vlstress.suites.zeroshot.corruption_intervals): on all
the images the statistics give exactly the corruption table's numbers (known answers of
`corruption_table`); the interval holds the value and narrows with more images; the baseline's own
mCE (always 100) has none and says why; images that are not the same ones get no interval."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vlstress.outcomes import Outcomes
from vlstress.suites.zeroshot import corruption_intervals as ci
from vlstress.suites.zeroshot.corruption_error import corruption_table

CELLS = ci.cells_of([("fog", 1), ("fog", 5), ("noise", 1), ("noise", 5)])


def _grid(rng: np.random.Generator, n: int, accuracy: list[float], clean: float) -> ci.Grid:
    correct = np.stack([rng.random(n) < a for a in accuracy], axis=1)
    return ci.Grid(correct, rng.random(n) < clean)


def _table(grids: dict[str, ci.Grid]) -> pd.DataFrame:
    top1 = pd.DataFrame(
        [
            {"model": m, "corruption": c, "severity": s, "top1": 100 * g.correct[:, j].mean()}
            for m, g in grids.items()
            for j, (c, s) in enumerate(CELLS.cells)
        ]
    )
    clean = {m: 100 * g.clean.mean() for m, g in grids.items()}
    return corruption_table(top1, clean, "base").set_index("model")


@pytest.fixture(scope="module")
def grids() -> dict[str, ci.Grid]:
    rng = np.random.default_rng(5)
    return {
        "base": _grid(rng, 200, [0.5, 0.3, 0.6, 0.2], 0.8),
        "other": _grid(rng, 200, [0.6, 0.5, 0.7, 0.4], 0.85),
    }


def test_the_statistics_give_the_tables_numbers_on_all_images(grids):
    table = _table(grids)
    found = ci.resamplings(grids["other"], grids["base"], CELLS)
    for metric in ci.METRICS:
        resampling = found[metric]
        data = [np.moveaxis(s, 0, -1) for s in resampling.samples]  # images last, as scipy
        assert float(resampling.statistic(*data)) == pytest.approx(
            table.loc["other", metric], rel=1e-12
        ), metric


def test_intervals_hold_the_value_narrow_with_more_images_and_say_why_not(grids):
    table = _table(grids)
    bounds = ci.intervals(grids, "base", CELLS, 0.95, 400, 0)
    for metric in ci.METRICS:
        lo, hi, method = bounds["other"][metric]
        assert method == "BCa", metric
        assert lo < table.loc["other", metric] < hi, metric
    # the baseline against itself: mCE is 100 in every resample
    lo, hi, why = bounds["base"]["mCE"]
    assert np.isnan(lo) and np.isnan(hi) and why == ci.UNDEFINED
    assert np.isfinite(bounds["base"]["mCA"][0])
    # 4x the images: about half the width
    rng = np.random.default_rng(5)
    more = {
        "base": _grid(rng, 800, [0.5, 0.3, 0.6, 0.2], 0.8),
        "other": _grid(rng, 800, [0.6, 0.5, 0.7, 0.4], 0.85),
    }
    wide = bounds["other"]["mCE"]
    narrow = ci.intervals(more, "base", CELLS, 0.95, 400, 0)["other"]["mCE"]
    assert 0.3 < (narrow[1] - narrow[0]) / (wide[1] - wide[0]) < 0.75
    # batches of resamples bound memory; the interval is the bootstrap's all the same
    small = ci.MEMORY_ITEMS
    try:
        ci.MEMORY_ITEMS = 5 * 200 * 7  # 7 resamples at a time
        batched = ci.intervals(grids, "base", CELLS, 0.95, 400, 0)["other"]["mCE"]
    finally:
        ci.MEMORY_ITEMS = small
    assert batched[:2] == pytest.approx(wide[:2], rel=0.05)


def test_outcomes_of_other_images_give_no_grid():
    rng = np.random.default_rng(0)
    labels = np.arange(20) % 4

    def block(lab: np.ndarray) -> Outcomes:
        return Outcomes("image", {"correct": rng.random(20) < 0.5, "label": lab})

    blocks = {cell: block(labels) for cell in CELLS.cells}
    assert ci.grid_of(blocks, block(labels), CELLS) is not None
    shuffled = dict(blocks)
    shuffled[("noise", 5)] = block(labels[::-1])  # other images, or another order
    assert ci.grid_of(shuffled, block(labels), CELLS) is None
    missing = {cell: b for cell, b in blocks.items() if cell != ("fog", 5)}
    assert ci.grid_of(missing, None, CELLS) is None
    # a clean set of other images: the grid, without relative mCE's clean column
    grid = ci.grid_of(blocks, block(labels[::-1]), CELLS)
    assert grid is not None and grid.clean is None
    assert set(ci.resamplings(grid, grid, CELLS)) == {"mCA", "mCE"}
