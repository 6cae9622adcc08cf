"""Intervals: Wilson's score interval of a share of items (statsmodels), in percent, and a seeded
BCa bootstrap of a metric recomputed from its per-item outcomes (scipy.stats)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from statsmodels.stats.proportion import proportion_confint

from vlstress.outcomes import Resampling


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


# BCa's acceleration is a jackknife: one recomputation per item. Above this many items (an ImageNet
# set) the interval is the percentile bootstrap, and says so.
BCA_MAX_ITEMS = 5000


def bootstrap_interval(
    resampling: Resampling, confidence: float, n_resamples: int, seed: int
) -> tuple[float, float, str]:
    """A seeded bootstrap interval (scipy.stats.bootstrap) of a metric recomputed from its items,
    and its method: "BCa" up to `BCA_MAX_ITEMS` items, "percentile" above. NaN, NaN, "" when the
    resamples are degenerate (every resample gives one value, e.g. all items correct) or a sample
    has fewer than 2 items."""
    import warnings

    from scipy.stats import bootstrap

    sizes = [len(sample) for sample in resampling.samples]
    if min(sizes) < 2:
        return float("nan"), float("nan"), ""
    method = "BCa" if sum(sizes) <= BCA_MAX_ITEMS else "percentile"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DegenerateDataWarning: reported as NaN below
        found = bootstrap(
            resampling.samples,
            resampling.statistic,
            paired=resampling.paired,
            vectorized=False,
            n_resamples=n_resamples,
            confidence_level=confidence,
            method=method,
            random_state=np.random.default_rng(seed),
        )
    low, high = float(found.confidence_interval.low), float(found.confidence_interval.high)
    if not (np.isfinite(low) and np.isfinite(high)):
        return float("nan"), float("nan"), ""
    return low, high, method
