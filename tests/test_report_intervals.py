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
