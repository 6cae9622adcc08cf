"""Intervals: Wilson's score interval of a share of items (statsmodels), in percent, and a seeded
BCa bootstrap of a metric recomputed from its per-item outcomes (scipy.stats)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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
# Below this many items a bootstrap tells nothing: n items have only C(2n-1, n) distinct
# resamples (3 for 2 items, 126 for 5, 92,378 for 10), its intervals collapse onto the few values
# the metric can take, and a paired difference that is the same sign in all of them would get a
# p of 0. No interval and no test below it; the tables say so.
MIN_BOOTSTRAP_ITEMS = 10
TOO_FEW_ITEMS = f"fewer than {MIN_BOOTSTRAP_ITEMS} items to resample"
DEGENERATE = "every resample gives the same value"


def _bootstrap(
    samples: tuple[np.ndarray, ...],
    statistic: Any,
    *,
    paired: bool,
    vectorized: bool,
    confidence: float,
    n_resamples: int,
    seed: int,
    batch: int | None = None,
) -> tuple[Any, str] | None:
    """scipy's bootstrap result and its method (BCa up to `BCA_MAX_ITEMS` items, percentile
    above); None when a sample has fewer than `MIN_BOOTSTRAP_ITEMS` items. `batch`: resamples
    computed at once (scipy's; None: all)."""
    import warnings

    from scipy.stats import bootstrap

    sizes = [len(sample) for sample in samples]
    if min(sizes) < MIN_BOOTSTRAP_ITEMS:
        return None
    method = "BCa" if sum(sizes) <= BCA_MAX_ITEMS else "percentile"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DegenerateDataWarning: a NaN bound, reported as such
        found = bootstrap(
            samples,
            statistic,
            paired=paired,
            vectorized=vectorized,
            n_resamples=n_resamples,
            confidence_level=confidence,
            method=method,
            random_state=np.random.default_rng(seed),
            batch=batch,
        )
    return found, method


def bootstrap_interval(
    resampling: Resampling,
    confidence: float,
    n_resamples: int,
    seed: int,
    batch: int | None = None,
) -> tuple[float, float, str]:
    """A seeded bootstrap interval (scipy.stats.bootstrap) of a metric recomputed from its items,
    and its method: "BCa" up to `BCA_MAX_ITEMS` items, "percentile" above. NaN, NaN and why there
    is none (`TOO_FEW_ITEMS`, `DEGENERATE`: every resample gives one value, e.g. all items
    correct) otherwise. `batch`: resamples computed at once, to bound memory."""
    done = _bootstrap(
        resampling.samples,
        resampling.statistic,
        paired=resampling.paired,
        vectorized=resampling.vectorized,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
        batch=batch,
    )
    if done is None:
        return float("nan"), float("nan"), TOO_FEW_ITEMS
    found, method = done
    low, high = float(found.confidence_interval.low), float(found.confidence_interval.high)
    if not (np.isfinite(low) and np.isfinite(high)):
        return float("nan"), float("nan"), DEGENERATE
    return low, high, method


@dataclass(frozen=True)
class PairedDifference:
    """Metric of model a minus model b on the same items, its bootstrap interval (NaN where
    degenerate) and two-sided p from the bootstrap's standard error (`bootstrap_p`)."""

    difference: float
    lo: float
    hi: float
    p: float
    method: str


def paired_difference(
    a: Resampling, b: Resampling, confidence: float, n_resamples: int, seed: int
) -> PairedDifference | None:
    """The paired bootstrap of a - b: the same resampled items (indices) for both models, strata
    kept as `a.paired` says. None when the two are not resampled alike (other sizes) or have
    fewer than `MIN_BOOTSTRAP_ITEMS` items (`enough_items`)."""
    if a.paired != b.paired or [len(s) for s in a.samples] != [len(s) for s in b.samples]:
        return None
    vectorized = a.vectorized and b.vectorized
    picks = (
        (np.arange(len(a.samples[0])),) if a.paired else tuple(map(np.arange, map(len, a.samples)))
    )

    def pick(r: Resampling, index: tuple) -> list[np.ndarray]:
        if r.paired:
            return [sample[index[0]] for sample in r.samples]
        return [sample[i] for sample, i in zip(r.samples, index)]

    def statistic(*index: np.ndarray, axis: int = -1) -> Any:
        if vectorized:
            return a.statistic(*pick(a, index), axis=axis) - b.statistic(*pick(b, index), axis=axis)
        return a.statistic(*pick(a, index)) - b.statistic(*pick(b, index))

    difference = float(statistic(*picks))
    done = _bootstrap(
        picks,
        statistic,
        paired=a.paired,
        vectorized=vectorized,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
    )
    if done is None:
        return None
    found, method = done
    spread = np.asarray(found.bootstrap_distribution, dtype=np.float64)
    p = bootstrap_p(difference, spread)
    low, high = float(found.confidence_interval.low), float(found.confidence_interval.high)
    if not (np.isfinite(low) and np.isfinite(high)):
        low = high = float("nan")
    return PairedDifference(difference, low, high, p, method)


def bootstrap_p(difference: float, spread: np.ndarray) -> float:
    """Two-sided p of "the difference is 0" from its B resampled values: the normal p of the
    difference over their standard deviation (the bootstrap's standard error, Efron & Tibshirani
    1993, ch. 16). A count of the resamples beyond 0 could not go below 2 / (B + 1), which no
    Holm-corrected table of hundreds of rows could call significant, however large the
    difference. Every resample the same value: 1 when it is 0, else that floor, 2 / (B + 1)."""
    from scipy.stats import norm

    values = spread[np.isfinite(spread)]
    if len(values) == 0 or not np.isfinite(difference):
        return float("nan")
    se = float(np.std(values, ddof=1)) if len(values) > 1 else 0.0
    if se > 1e-9 * max(abs(difference), 1.0):  # not rounding noise of one repeated value
        return float(min(1.0, 2.0 * norm.sf(abs(difference) / se)))
    return 1.0 if difference == 0 else 2.0 / (len(values) + 1)


def enough_items(resampling: Resampling) -> bool:
    """Does every sample have at least `MIN_BOOTSTRAP_ITEMS` items?"""
    return min(len(sample) for sample in resampling.samples) >= MIN_BOOTSTRAP_ITEMS
