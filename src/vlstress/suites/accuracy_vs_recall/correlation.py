"""Zero-shot top-1 against retrieval R@1 across models: a least-squares line and Pearson's and
Spearman's correlation per retrieval condition (scipy.stats), from the aggregated summary table,
and the line the figure draws: least squares in logit space (`logit_slope`, `logit_intercept`;
the zero-shot suite's `robustness.fit_line`, as imagenet-testbed fits accuracy against accuracy).

Conditions: each (direction, task, condition) of the retrieval records with an `R@1`, e.g.
`image → text, original`, `image → text, same-concept`, `text → image, mix λ=0.9`; a stressed
condition is its mean over variant seeds. Models are paired by their slug; a model without a
zero-shot top-1 on the test set, or without the condition, is left out of that condition. With fewer
than three models, or without spread in either axis, the line and the correlations are undefined
(NaN, and a note says so): two points always lie on a line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from vlstress.errors import VlstressError

MIN_MODELS = 3
DIRECTIONS = {"i2t": "image → text", "t2i": "text → image"}


@dataclass(frozen=True)
class Fit:
    """One retrieval condition across models."""

    direction: str  # i2t, t2i
    task: str  # retrieval, text-stress, image-stress
    condition: str  # the condition's label (`original`, `same-concept`, `mix λ=0.9`)
    n_models: int
    slope: float
    intercept: float
    pearson_r: float
    pearson_p: float
    spearman_rho: float
    spearman_p: float
    # the figure's line: logit(R@1) = logit_slope x logit(top-1) + logit_intercept
    logit_slope: float = math.nan
    logit_intercept: float = math.nan


def paired(agg: pd.DataFrame, testset: str) -> pd.DataFrame:
    """Long table model, label, accuracy, direction, task, condition, recall (percent)."""
    zeroshot = agg[
        (agg["task"] == "zeroshot") & (agg["metric"] == "top1") & (agg["dataset"] == testset)
    ]
    if zeroshot.empty:
        known = sorted(agg.loc[agg["task"] == "zeroshot", "dataset"].unique())
        raise VlstressError(
            f"no zero-shot top-1 of test set {testset!r} in the summary"
            f" (known: {', '.join(known) or 'none'})"
        )
    accuracy = zeroshot.groupby("model")["mean"].mean()
    rows = []
    for direction in DIRECTIONS:
        recall = agg[agg["metric"] == f"{direction}_R@1"]
        for (task, condition, model), value in (
            recall.groupby(["task", "condition_label", "model"], sort=False)["mean"].mean().items()
        ):
            if model in accuracy.index:
                rows.append((model, direction, task, condition, accuracy[model], value))
    return pd.DataFrame(
        rows, columns=["model", "direction", "task", "condition", "accuracy", "recall"]
    )


def fit(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float, float, float, float]:
    """(slope, intercept, Pearson r, its p, Spearman rho, its p); NaN where undefined."""
    nan = (math.nan,) * 6
    if len(x) < MIN_MODELS or np.ptp(x) == 0 or np.ptp(y) == 0:
        return nan
    line = stats.linregress(x, y)
    rho = stats.spearmanr(x, y)
    return (
        float(line.slope),
        float(line.intercept),
        float(line.rvalue),
        float(line.pvalue),
        float(rho.statistic),
        float(rho.pvalue),
    )


def logit_fit(x: np.ndarray, y: np.ndarray, epsilon: float) -> tuple[float, float]:
    """(slope, intercept) of logit(R@1) on logit(top-1) (percent in; 0 and 100% clipped by
    `epsilon`, a fraction); NaN where `fit` is undefined or the clipped values have no spread."""
    from vlstress.suites.zeroshot import robustness

    if len(x) < MIN_MODELS or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan, math.nan
    try:
        line = robustness.fit_line(list(x / 100.0), list(y / 100.0), "logit", "ols", epsilon)
    except VlstressError:
        return math.nan, math.nan
    return float(line.slope), float(line.intercept)


def fits(pairs: pd.DataFrame, epsilon: float) -> tuple[list[Fit], list[str]]:
    """One Fit per retrieval condition (in table order), and a note per reason some are undefined
    (naming them); `epsilon`: the clip of 0 and 100% before the logit (a fraction)."""
    found: list[Fit] = []
    undefined: dict[str, list[str]] = {}
    for (direction, task, condition), group in pairs.groupby(
        ["direction", "task", "condition"], sort=False
    ):
        x, y = group["accuracy"].to_numpy(float), group["recall"].to_numpy(float)
        numbers = fit(x, y)
        found.append(
            Fit(direction, task, condition, len(group), *numbers, *logit_fit(x, y, epsilon))
        )
        if math.isnan(numbers[0]):
            why = (
                f"{len(group)} model(s), at least {MIN_MODELS} needed"
                if len(group) < MIN_MODELS
                else "no spread in top-1 or R@1"
            )
            undefined.setdefault(why, []).append(f"{DIRECTIONS[direction]} {condition}")
    notes = [f"undefined ({why}): {', '.join(where)}" for why, where in undefined.items()]
    return found, notes
