"""The figure's line of one retrieval condition and its 95% band, in logit space as imagenet-testbed
draws accuracy against accuracy: logit(R@1) = slope × logit(top-1) + intercept, least squares over
the models, and the percentile bootstrap over the models (refit per resample, seeded, pointwise
percentiles). Both come from the zero-shot suite's effective-robustness line
(`vlstress.suites.zeroshot.robustness.fit_line` / `bootstrap_band`), which fits the same line.

A share of 0 or 100% has no logit: it is clipped to half an item of the coarsest set behind the
points (`half_item`), the finest step its counts can resolve."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from vlstress.errors import VlstressError
from vlstress.suites.zeroshot import robustness

TRANSFORM = "logit"
CONFIDENCE = 0.95
N_RESAMPLES = 1000
SEED = 0
GRID_POINTS = 61


@dataclass(frozen=True)
class Curve:
    """A line drawn in percent over `x` (top-1, %), with its band (NaN-free, or None: no band)."""

    x: np.ndarray
    y: np.ndarray
    low: np.ndarray | None
    high: np.ndarray | None


def half_item(table: pd.DataFrame, testset: str) -> float:
    """Half an item of the smallest count behind a point (the zero-shot test set's images, the
    retrieval queries: images or captions), as a fraction; the robustness default when no count
    is known."""
    zeroshot = table[(table["task"] == "zeroshot") & (table["dataset"] == testset)]
    retrieval = table[table["metric"].astype(str).str.match(r"^(i2t|t2i)_R@1$")]
    counts = [
        *zeroshot["n_images"].dropna(),
        *retrieval.loc[retrieval["metric"].str.startswith("i2t"), "n_images"].dropna(),
        *retrieval.loc[retrieval["metric"].str.startswith("t2i"), "n_captions"].dropna(),
    ]
    counts = [float(c) for c in counts if float(c) > 0]
    if not counts:
        return robustness.EPSILON
    return min(0.5 / min(counts), 0.49)


def curve(
    accuracy: np.ndarray,
    recall: np.ndarray,
    epsilon: float,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
) -> tuple[Curve, str | None]:
    """The logit line through (top-1, R@1) in percent over the span of the top-1 values, and its
    band; the reason there is no band (too few distinct models), or None."""
    x, y = np.asarray(accuracy, float) / 100.0, np.asarray(recall, float) / 100.0
    line = robustness.fit_line(x.tolist(), y.tolist(), TRANSFORM, "ols", epsilon)
    axis = robustness.get_transform(TRANSFORM)
    start, stop = axis.to_axis([x.min(), x.max()], epsilon)
    grid = np.linspace(float(start), float(stop), GRID_POINTS)
    xs = 100.0 * axis.to_accuracy(grid)
    ys = 100.0 * axis.to_accuracy(line.slope * grid + line.intercept)
    try:
        band = robustness.bootstrap_band(
            x.tolist(), y.tolist(), grid, TRANSFORM, "ols", epsilon, n_resamples, seed, CONFIDENCE
        )
    except VlstressError as exc:
        return Curve(xs, ys, None, None), str(exc)
    low, high = 100.0 * axis.to_accuracy(band.low), 100.0 * axis.to_accuracy(band.high)
    return Curve(xs, ys, low, high), None
