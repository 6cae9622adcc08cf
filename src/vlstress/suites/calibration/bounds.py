"""The search interval of the temperature fit, whether a fitted T sits on its edge, and whether it
worsens the held-out NLL (the fit, the table and the figures ask; the report steps must not import
the fit's libraries)."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

# log T is searched in [LOG_T_MIN, LOG_T_MAX]: T from 0.01 to 100
LOG_T_MIN, LOG_T_MAX = math.log(1e-2), math.log(1e2)


def at_bound(temperature: float) -> bool:
    """Whether a fitted temperature sits on the search bound (no interior optimum: e.g. every fit
    image wrong)."""
    return (
        abs(math.log(temperature) - LOG_T_MIN) < 1e-3
        or abs(math.log(temperature) - LOG_T_MAX) < 1e-3
    )


def worsens(nll_raw: float, nll_scaled: float) -> bool:
    """Whether the fitted T makes the held-out in-distribution NLL worse than T = 1 does (it can:
    T minimises the NLL of the fit split only)."""
    return nll_scaled > nll_raw


def fit_flags(rows: pd.DataFrame, value: str = "value") -> dict[str, tuple[bool, bool]]:
    """Model slug -> (T on the search bound, T worsens the held-out ID NLL), from a model's
    calibration rows of the summary (columns model, condition_json, metric and `value`; replicates
    averaged): what the table and the figures flag."""
    out: dict[str, tuple[bool, bool]] = {}
    for model, group in rows.groupby("model", sort=False):
        temperatures = group.loc[group["metric"] == "temperature", value]
        bound = any(t > 0 and at_bound(float(t)) for t in temperatures)
        held_out = group[
            group["condition_json"].map(lambda c: json.loads(c).get("split") == "held-out")
        ]
        nll = held_out.groupby("metric")[value].mean()
        worse = "nll" in nll and "nll_ts" in nll and worsens(nll["nll"], nll["nll_ts"])
        out[str(model)] = (bound, bool(worse))
    return out
