"""Scores of the correspondence protocols from their errors (Probe3D's evaluation scripts),
in NumPy so that report code can use them without torch.

Recalls are percentages: the share of errors strictly below a threshold. ScanNet and NAVI pool
every match of every pair for the headline recalls and average a per-pair recall within
rotation bins; SPair-71k pools the keypoints of the pairs of one class and viewpoint bucket,
then averages those recalls over the classes that have pairs in the bucket.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from vlstress.errors import VlstressError

SCANNET_PX_THRESHOLDS = (5.0, 10.0, 20.0)
SCANNET_BIN_THRESHOLD = 10.0
SCANNET_ANGLE_BINS = (0.0, 15.0, 30.0, 60.0, 180.0)
NAVI_METRE_THRESHOLDS = (0.01, 0.02, 0.05)
NAVI_PX_THRESHOLDS = (5.0, 25.0, 50.0)
NAVI_BIN_THRESHOLD = 0.02
NAVI_ANGLE_BINS = (0.0, 30.0, 60.0, 90.0, 120.0)
SPAIR_THRESHOLD = 0.10


def recall(errors: np.ndarray, thresholds: Sequence[float]) -> tuple[float, ...]:
    """Recall (%) below each threshold over all errors (every match of every pair)."""
    errors = np.asarray(errors, dtype=np.float64).ravel()
    if errors.size == 0:
        raise VlstressError("no correspondence errors to score")
    return tuple(float(100.0 * np.mean(errors < threshold)) for threshold in thresholds)


def per_pair_recall(errors: Sequence[np.ndarray] | np.ndarray, threshold: float) -> np.ndarray:
    """Recall (%) below `threshold` of each pair's errors: one value per pair (a pair without
    errors is NaN)."""
    values = []
    for pair_errors in errors:
        pair_errors = np.asarray(pair_errors, dtype=np.float64)
        values.append(100.0 * np.mean(pair_errors < threshold) if pair_errors.size else np.nan)
    return np.asarray(values, dtype=np.float64)


@dataclass(frozen=True)
class Binned:
    """The mean of a value within bins [edges[k], edges[k+1]) of another (Probe3D's
    compute_binned_performance): `means[k]` is NaN where `counts[k]` is 0."""

    edges: tuple[float, ...]
    means: tuple[float, ...]
    counts: tuple[int, ...]

    def labels(self) -> tuple[str, ...]:
        return tuple(f"[{lo:g}, {hi:g})" for lo, hi in zip(self.edges[:-1], self.edges[1:]))

    def empty(self) -> tuple[str, ...]:
        """The labels of the bins without any value (their mean is NaN)."""
        return tuple(label for label, n in zip(self.labels(), self.counts) if n == 0)


def binned_mean(values: np.ndarray, keys: np.ndarray, edges: Sequence[float]) -> Binned:
    """Mean of `values` over the items whose key lies in [edges[k], edges[k+1]); keys outside
    every bin (e.g. a rotation of exactly 180 degrees with bins ending at 180) count nowhere,
    as in Probe3D."""
    values = np.asarray(values, dtype=np.float64)
    keys = np.asarray(keys, dtype=np.float64)
    if values.shape != keys.shape:
        raise VlstressError(f"{values.size} values for {keys.size} bin keys")
    means = []
    counts = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        inside = (keys >= lo) & (keys < hi)
        counts.append(int(inside.sum()))
        means.append(float(values[inside].mean()) if inside.any() else float("nan"))
    return Binned(tuple(float(e) for e in edges), tuple(means), tuple(counts))


def bucket_recalls(
    errors: Mapping[tuple[str, Hashable], np.ndarray], threshold: float = SPAIR_THRESHOLD
) -> dict[tuple[str, Hashable], float]:
    """SPair-71k recall (%) below `threshold` of each (class, viewpoint bucket), over the pooled
    errors of its pairs; NaN where the bucket has no keypoint (no pair). As in Probe3D, the
    "all" bucket is its own sample of a class's pairs (any viewpoint), not the union of the
    others: its errors come keyed (class, "all") like any bucket's."""
    return {
        key: float(100.0 * np.mean(np.asarray(values) < threshold)) if np.size(values) else np.nan
        for key, values in errors.items()
    }


def mean_over_classes(
    recalls: Mapping[tuple[str, Hashable], float], buckets: Sequence[Hashable]
) -> dict[Hashable, float]:
    """Per bucket, the mean over classes of the class recalls, ignoring the classes whose bucket
    is empty (NaN or absent); NaN where every class is empty."""
    means: dict[Hashable, float] = {}
    for bucket in buckets:
        present = [
            value for (_, b), value in recalls.items() if b == bucket and not np.isnan(value)
        ]
        means[bucket] = float(np.mean(present)) if present else float("nan")
    return means
