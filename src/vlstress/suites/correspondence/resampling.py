"""The per-pair outcomes of a correspondence record and what a bootstrap of its recall resamples.

The unit is the pair: on ScanNet and NAVI the record's recall is the mean of the pairs' recalls
(every pair keeps the same number of matches, as Probe3D's evaluation requires), and a BCa
bootstrap over pairs gives its interval. SPair-71k's PCK pools keypoints within a class and then
averages classes: its pairs keep their keypoint counts and class, and the statistic is that class
average, so the full block gives the record's value. NumPy only: the planner imports this module
through `suite.py`.
"""

from __future__ import annotations

import numpy as np

from vlstress.outcomes import Outcomes, Resampling

SOURCE = "of a correspondence record"


def pair_outcomes(
    recall: np.ndarray, angle: np.ndarray, correct: np.ndarray, counted: np.ndarray, group
) -> Outcomes:
    """One record's outcomes, one value per pair in the record's order: its recall (%) at the
    record's threshold, its rotation (degrees; SPair: the viewpoint bucket), its correct and
    counted matches or keypoints, and its group (SPair: the class index; else `EACH_PAIR`)."""
    return Outcomes(
        "pair",
        {
            "recall": np.asarray(recall, dtype=np.float64),
            "angle": np.asarray(angle, dtype=np.float64),
            "correct": np.asarray(correct, dtype=np.int64),
            "counted": np.asarray(counted, dtype=np.int64),
            "group": np.asarray(group, dtype=np.int64),
        },
    )


EACH_PAIR = -1  # the group of a pair that is its own group (ScanNet, NAVI)


def class_mean_recall(
    correct: np.ndarray, counted: np.ndarray, group: np.ndarray, axis: int = -1
) -> np.ndarray | float:
    """100 x the mean over groups of (correct / counted) pooled within each group: SPair's PCK
    averaged over classes; where every pair is its own group (`EACH_PAIR`: ScanNet, NAVI), the
    mean of the pairs' recalls (Probe3D's mean over pairs; a pair drawn twice counts twice).
    Pairs on `axis`; given resamples on the other axes, one value per resample."""
    correct = np.moveaxis(np.asarray(correct, dtype=np.float64), axis, -1)
    counted = np.moveaxis(np.asarray(counted, dtype=np.float64), axis, -1)
    group = np.moveaxis(np.asarray(group), axis, -1)
    if group.size and (group == EACH_PAIR).all():
        found = 100.0 * np.mean(correct / counted, axis=-1)
    else:
        # per group: its pooled share, NaN where it has nothing counted (or is not drawn)
        shares = []
        for g in np.unique(group):
            inside = group == g
            total = np.where(inside, counted, 0.0).sum(axis=-1)
            hits = np.where(inside, correct, 0.0).sum(axis=-1)
            shares.append(np.divide(hits, total, out=np.full(total.shape, np.nan), where=total > 0))
        stacked = np.stack(shares) if shares else np.full((1, *group.shape[:-1]), np.nan)
        drawn = np.isfinite(stacked)
        means = np.where(drawn, stacked, 0.0).sum(axis=0) / np.maximum(drawn.sum(axis=0), 1)
        found = np.where(drawn.any(axis=0), 100.0 * means, np.nan)
    return float(found) if np.ndim(found) == 0 else found


def recall_resampling(outcomes: Outcomes) -> Resampling:
    """The pairs and the record's `recall` (%): the pairs' mean, or SPair's class average."""
    return Resampling(
        (
            outcomes.column("correct", SOURCE).astype(np.float64),
            outcomes.column("counted", SOURCE).astype(np.float64),
            outcomes.column("group", SOURCE),
        ),
        class_mean_recall,
        paired=True,
        vectorized=True,
    )
