"""The search interval of the temperature fit, and whether a fitted T sits on its edge (the fit and
the table both ask; the table step must not import the fit's libraries)."""

from __future__ import annotations

import math

# log T is searched in [LOG_T_MIN, LOG_T_MAX]: T from 0.01 to 100
LOG_T_MIN, LOG_T_MAX = math.log(1e-2), math.log(1e2)


def at_bound(temperature: float) -> bool:
    """Whether a fitted temperature sits on the search bound (no interior optimum: e.g. every fit
    image wrong)."""
    return (
        abs(math.log(temperature) - LOG_T_MIN) < 1e-3
        or abs(math.log(temperature) - LOG_T_MAX) < 1e-3
    )
