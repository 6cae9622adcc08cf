"""Intervals of a share of items: Wilson's score interval (statsmodels), in percent."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from statsmodels.stats.proportion import proportion_confint


def wilson_percent(
    value_pct: ArrayLike, n: ArrayLike, confidence: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """The Wilson interval of shares given in percent of `n` items (NaN where n is missing or 0).
    A share averaged over seeds is a fractional count: the score interval takes it as it is."""
    values = np.asarray(value_pct, dtype="float64")
    items = np.asarray(n, dtype="float64")
    lo = np.full(values.shape, np.nan)
    hi = np.full(values.shape, np.nan)
    ok = np.isfinite(values) & np.isfinite(items) & (items > 0)
    if ok.any():
        count = np.clip(values[ok], 0.0, 100.0) / 100.0 * items[ok]
        low, high = proportion_confint(count, items[ok], alpha=1.0 - confidence, method="wilson")
        lo[ok] = 100.0 * np.asarray(low)
        hi[ok] = 100.0 * np.asarray(high)
    return lo, hi
