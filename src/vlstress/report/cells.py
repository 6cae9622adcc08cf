"""How a card and the headline tables write a number, an item count and an interval."""

from __future__ import annotations

import numpy as np

NO_INTERVAL = "—, needs per-item outcomes"


def count_text(n: float) -> str:
    return f"{n:.0f}" if float(n).is_integer() else f"{n:.1f}"


def value_text(value: float) -> str:
    return f"{value:.1f}" if np.isfinite(value) else "—"


def interval_text(lo: float, hi: float, why_none: object = None) -> str:
    """The interval, or a dash and why there is none: `why_none` (the headline table's `interval`
    column where it holds a reason, not a method), else the lack of per-item outcomes."""
    if np.isfinite(lo) and np.isfinite(hi):
        return f"[{lo:.1f}, {hi:.1f}]"
    return f"—, {why_none}" if isinstance(why_none, str) and why_none else NO_INTERVAL
