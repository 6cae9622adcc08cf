"""Wilson intervals drawn on bar figures: each bar of one (x, hue) row gets its interval; a bar
that stands for a mean of several rows gets none."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import seaborn as sns  # noqa: E402
from scipy import stats  # noqa: E402

from vlstress.report.figures import wilson_bars  # noqa: E402
from vlstress.report.intervals import wilson_percent  # noqa: E402


def test_each_bar_gets_its_own_interval_and_a_mean_none():
    data = pd.DataFrame(
        {
            "model": ["a", "a", "b", "b", "b"],
            "which": ["clean", "shifted", "clean", "shifted", "shifted"],
            "value": [20.0, 50.0, 90.0, 10.0, 30.0],  # b's shifted bar is a mean of two rows
            "n_images": [30, 30, 300, 30, 30],
        }
    )
    fig, ax = plt.subplots()
    sns.barplot(data=data, x="model", y="value", hue="which", errorbar=None, ax=ax)
    drawn = wilson_bars(ax, data, "model", "which", ["a", "b"], ["clean", "shifted"])
    assert drawn == 3
    bars = {}
    for line in ax.collections:  # an errorbar's vertical line: a LineCollection of one segment
        for (x0, y0), (_, y1) in line.get_segments():
            bars[round(x0, 3)] = (y0, y1)
    centres = {
        (name, level): round(bar.get_x() + bar.get_width() / 2, 3)
        for container, level in zip(ax.containers, ["clean", "shifted"])
        for bar, name in zip(container, ["a", "b"])
    }
    for name, level, value, n in [
        ("a", "clean", 20, 30),
        ("a", "shifted", 50, 30),
        ("b", "clean", 90, 300),
    ]:
        lo, hi = wilson_percent(np.array([value]), np.array([n]))
        assert bars[centres[(name, level)]] == pytest.approx((lo[0], hi[0]))
    assert centres[("b", "shifted")] not in bars
    # n = 300 gives a narrower interval than n = 30
    a, b = bars[centres[("a", "clean")]], bars[centres[("b", "clean")]]
    assert b[1] - b[0] < (a[1] - a[0]) / 2
    plt.close(fig)


# ------------------------------------------------------------------- bootstrap of per-item outcomes


def test_the_bootstrap_interval_is_scipys_bca_with_the_same_seed() -> None:
    from scipy.stats import bootstrap

    from vlstress.outcomes import Resampling
    from vlstress.report.intervals import bootstrap_interval

    rng = np.random.default_rng(3)
    values = rng.normal(10.0, 2.0, size=40)
    lo, hi, method = bootstrap_interval(Resampling((values,), np.mean), 0.95, 500, seed=7)
    assert method == "BCa"
    direct = bootstrap(
        (values,), np.mean, n_resamples=500, method="BCa", random_state=np.random.default_rng(7)
    ).confidence_interval
    assert (lo, hi) == pytest.approx((direct.low, direct.high))
    assert lo < values.mean() < hi
    # strata: two independent samples, each resampled within itself
    other = rng.normal(12.0, 2.0, size=30)
    lo, hi, _ = bootstrap_interval(
        Resampling((values, other), lambda a, b: np.mean(b) - np.mean(a), paired=False),
        0.95,
        500,
        seed=7,
    )
    assert lo < other.mean() - values.mean() < hi


def test_a_degenerate_bootstrap_has_no_interval() -> None:
    from vlstress.outcomes import Resampling
    from vlstress.report import intervals
    from vlstress.report.intervals import bootstrap_interval

    same = np.ones(20)
    lo, hi, why = bootstrap_interval(Resampling((same,), np.mean), 0.95, 200, seed=0)
    assert np.isnan(lo) and np.isnan(hi) and why == intervals.DEGENERATE
    # too few items: none, and says so, even where the resamples differ
    few = np.arange(float(intervals.MIN_BOOTSTRAP_ITEMS - 1))
    lo, hi, why = bootstrap_interval(Resampling((few,), np.mean), 0.95, 200, seed=0)
    assert np.isnan(lo) and np.isnan(hi) and why == intervals.TOO_FEW_ITEMS
    lo, hi, why = bootstrap_interval(Resampling((few[:1],), np.mean), 0.95, 200, seed=0)
    assert np.isnan(lo) and np.isnan(hi) and why == intervals.TOO_FEW_ITEMS
    lo, hi, why = bootstrap_interval(Resampling((np.append(few, 9.0),), np.mean), 0.95, 200, 0)
    assert lo < 4.5 < hi and why == "BCa"


def test_a_large_sample_gets_the_percentile_bootstrap(monkeypatch) -> None:
    from scipy.stats import bootstrap

    from vlstress.outcomes import Resampling
    from vlstress.report import intervals

    monkeypatch.setattr(intervals, "BCA_MAX_ITEMS", 50)
    values = np.random.default_rng(1).normal(size=60)
    lo, hi, method = intervals.bootstrap_interval(Resampling((values,), np.mean), 0.9, 300, 4)
    direct = bootstrap(
        (values,),
        np.mean,
        n_resamples=300,
        confidence_level=0.9,
        method="percentile",
        random_state=np.random.default_rng(4),
    ).confidence_interval
    assert method == "percentile"
    assert (lo, hi) == pytest.approx((direct.low, direct.high))


def test_the_band_is_the_wilson_interval_at_each_point() -> None:
    from statsmodels.stats.proportion import proportion_confint

    from vlstress.report.figures import wilson_band

    fig, ax = plt.subplots()
    try:
        assert wilson_band(ax, [1, 2, 3], [20.0, 50.0, 80.0], [30, 30, float("nan")], "C0")
        (band,) = ax.collections
        (path,) = band.get_paths()
        ys = path.vertices[:, 1]
        lo, hi = proportion_confint(6, 30, method="wilson")
        assert min(ys) == pytest.approx(100 * lo)  # the lowest point is the first point's bound
        assert max(ys) == pytest.approx(100 * proportion_confint(15, 30, method="wilson")[1])
        assert not wilson_band(ax, [1], [50.0], [0], "C0")  # no items, no band
    finally:
        plt.close(fig)


def test_table_cells_give_a_share_with_its_wilson_interval() -> None:
    from vlstress.report.frames import MISSING, count_cell, share_cell

    assert share_cell(20.0, 30) == "20.0 [9.5, 37.3]"  # the demo's n = 30
    assert share_cell(0.2, 30, digits=3, scale=100) == "0.200 [0.095, 0.373]"  # a fraction
    assert share_cell(20.0, None) == "20.0" and share_cell(20.0, 0) == "20.0"
    assert share_cell(float("nan"), 30) == MISSING and share_cell(None, 30) == MISSING
    assert (count_cell(30.0), count_cell(4.8), count_cell(None)) == ("30", "4.8", MISSING)


def test_the_paired_bootstrap_resamples_the_same_items_for_both_models() -> None:
    """For a mean, the paired bootstrap of mean(a) - mean(b) is scipy's bootstrap of the mean of
    the per-item differences with the same seed; a constant shift has the smallest p B
    resamples can give, 2 / (B + 1), copies p = 1; under 10 items, no test."""
    from scipy.stats import bootstrap

    from vlstress.outcomes import Resampling
    from vlstress.report.intervals import paired_difference

    rng = np.random.default_rng(5)
    a = rng.normal(1.0, 1.0, 40)
    b = a - 0.3 + rng.normal(0.0, 0.5, 40)
    found = paired_difference(Resampling((a,), np.mean), Resampling((b,), np.mean), 0.95, 400, 9)
    assert found is not None and found.method == "BCa"
    direct = bootstrap(
        (a - b,), np.mean, n_resamples=400, method="BCa", random_state=np.random.default_rng(9)
    )
    assert found.difference == pytest.approx(np.mean(a - b))
    assert (found.lo, found.hi) == pytest.approx(
        (direct.confidence_interval.low, direct.confidence_interval.high)
    )
    spread = direct.bootstrap_distribution
    z = np.mean(a - b) / np.std(spread, ddof=1)
    assert found.p == pytest.approx(2 * stats.norm.sf(abs(z)))
    shifted = paired_difference(
        Resampling((a + 1,), np.mean), Resampling((a,), np.mean), 0.95, 200, 0
    )
    assert shifted is not None and shifted.difference == pytest.approx(1.0)
    assert shifted.p == pytest.approx(2 / 201)  # every resample 1: never 0, the floor
    same = paired_difference(Resampling((a,), np.mean), Resampling((a,), np.mean), 0.95, 200, 0)
    assert same is not None and same.p == 1.0 and np.isnan(same.lo)
    # strata (paired=False) keep each sample's size; other sizes are not paired at all
    two = paired_difference(
        Resampling((a, b), lambda x, y: np.mean(x) - np.mean(y), paired=False),
        Resampling((b, a), lambda x, y: np.mean(x) - np.mean(y), paired=False),
        0.95,
        200,
        0,
    )
    assert two is not None and two.difference == pytest.approx(2 * (np.mean(a) - np.mean(b)))
    assert (
        paired_difference(Resampling((a,), np.mean), Resampling((a[:30],), np.mean), 0.95, 200, 0)
        is None
    )
    # two items (a correspondence bin's pairs): 3 distinct resamples, no test at all
    assert (
        paired_difference(
            Resampling((a[:2] + 1,), np.mean), Resampling((a[:2],), np.mean), 0.95, 200, 0
        )
        is None
    )


def test_the_bootstrap_p_is_the_normal_p_of_the_difference_over_its_standard_error() -> None:
    """Known answers: a difference of 1.96 standard errors has p = 0.05, of 0 has p = 1; one far
    past what B resamples can count on the other side still gets its small p (here 2.2e-16 at 8
    standard errors), where a count of resamples would stop at 2 / (B + 1)."""
    from vlstress.report.intervals import bootstrap_p

    spread = np.random.default_rng(0).normal(0.0, 1.0, 20_000)
    spread = (spread - spread.mean()) / spread.std(ddof=1)  # exactly unit standard error
    assert bootstrap_p(1.959964, spread + 1.959964) == pytest.approx(0.05, abs=1e-6)
    assert bootstrap_p(0.0, spread) == pytest.approx(1.0)
    assert bootstrap_p(-8.0, spread - 8.0) == pytest.approx(2 * stats.norm.sf(8.0))
    assert bootstrap_p(-8.0, spread - 8.0) < 2 / 20_001
    assert bootstrap_p(0.0, np.zeros(99)) == 1.0  # every resample at 0
    assert bootstrap_p(1.0, np.ones(99)) == pytest.approx(2 / 100)  # every resample the same
    assert np.isnan(bootstrap_p(1.0, np.array([np.nan, np.nan])))
