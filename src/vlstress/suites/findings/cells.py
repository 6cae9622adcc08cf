"""How a card and the headline tables write a number, an item count and an interval."""

from __future__ import annotations

import numpy as np

NO_INTERVAL = "—, needs per-item outcomes"


def count_text(n: float) -> str:
    return f"{n:.0f}" if float(n).is_integer() else f"{n:.1f}"


def value_text(value: float) -> str:
    return f"{value:.1f}" if np.isfinite(value) else "—"


def interval_text(lo: float, hi: float) -> str:
    return f"[{lo:.1f}, {hi:.1f}]" if np.isfinite(lo) and np.isfinite(hi) else NO_INTERVAL
