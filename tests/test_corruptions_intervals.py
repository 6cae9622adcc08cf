"""The corruptions suite's figures state n and draw 95% Wilson intervals where a bar or marker is
one measurement: bounds equal statsmodels' Wilson interval; means over severities get none, and
the heatmap's note gives its widest cell interval."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from matplotlib.collections import LineCollection
from statsmodels.stats.proportion import proportion_confint

from vlstress.report.figures import setup, task_rows
from vlstress.suites.corruptions import figures


def _wilson(count: float, n: float) -> tuple[float, float]:
    lo, hi = proportion_confint(count, n, alpha=0.05, method="wilson")
    return round(100.0 * lo, 6), round(100.0 * hi, 6)


def _table(severities: tuple[int, ...] = (1, 5), n: int | None = 20) -> pd.DataFrame:
    """Model A: clean 10 of 20 right; fog at severity s: 10 - s of 20."""
    rows = []
    for s in severities:
        condition = json.dumps({"corruption": "fog", "severity": s}, sort_keys=True)
        for metric, value in (("top1", 5.0 * (10 - s)), ("top1_clean", 50.0)):
            rows.append(
                {
                    "model": "a",
                    "label": "A",
                    "weights_kind": "random-init",
                    "dataset": "objects-c-fog",
                    "n_images": n,
                    "n_classes": 5,
                    "task": "corruption",
                    "condition_json": condition,
                    "seed": None,
                    "metric": metric,
                    "value": value,
                }
            )
    return pd.DataFrame(rows)


def _spans(ax) -> list[tuple[float, float]]:
    return sorted(
        tuple(round(y, 6) for y in segment[:, 1])
        for c in ax.collections
        if isinstance(c, LineCollection)
        for segment in c.get_segments()
    )


def test_severity_markers_carry_their_wilson_bars():
    setup()
    fig, notes = figures.corruption_severity(_table())
    # clean 10 of 20, fog s1 9 of 20, fog s5 5 of 20
    assert _spans(fig.axes[0]) == sorted([_wilson(10, 20), _wilson(9, 20), _wilson(5, 20)])
    assert notes[0] == "n = 20 images per model (objects-c-fog)"
    assert notes[-1] == figures.WILSON_POINT_NOTE


def test_without_n_the_severity_figure_draws_no_bar_and_says_so():
    setup()
    fig, notes = figures.corruption_severity(_table(n=None))
    assert _spans(fig.axes[0]) == []
    assert notes[-1] == "no interval drawn: n unknown"


def test_error_bars_only_on_bars_of_one_measurement():
    setup()
    fig, notes = figures.corruption_error(_table())
    # the clean error (10 of 20 wrong) only: fog and the mean average two severities
    assert _spans(fig.axes[0]) == [_wilson(10, 20)]
    assert "no interval" in notes[-2] and notes[-1].startswith("n = 20 images")
    fig, _ = figures.corruption_error(_table(severities=(3,)))
    # one severity: clean, fog (13 of 20 wrong) and the mean over the one corruption (the same)
    assert _spans(fig.axes[0]) == sorted([_wilson(10, 20), _wilson(13, 20), _wilson(13, 20)])


def test_the_heatmap_note_gives_the_widest_cell_interval():
    setup()
    _, notes = figures.corruption_heatmap(_table())
    lo, hi = _wilson(9, 20)  # 45%: wider than 25%
    widest = figures.widest_interval(task_rows(_table(), "corruption"))
    assert widest == pytest.approx(hi - lo, abs=1e-6)
    assert f"up to {hi - lo:.0f} points wide" in notes[1]
    assert notes[0] == "n = 20 images per model (objects-c-fog)"
