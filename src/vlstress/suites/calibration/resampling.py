"""The per-image outcomes of a calibration record and what a bootstrap of its ECEs resamples.

A record's block (`image_outcomes`) holds the images its metrics are computed on (the held-out
split of the in-distribution set; every image of another set): the top-1 softmax confidence and
whether the top class is right, raw and with the logits divided by T (`_ts`), and the ECE's
number of bins (one value, repeated: a block has no other place for it). The statistics recompute
the record's ECE (%) with the suite's own `calibration_error`, so the full block gives the
record's value to the bit. NumPy only: the planner imports this module through `suite.py`.
"""

from __future__ import annotations

import numpy as np

from vlstress.errors import VlstressError
from vlstress.outcomes import Outcomes, Resampling
from vlstress.suites.calibration.calibration import (
    N_BINS,
    calibration_error,
    torch_linspace_edges,
)
from vlstress.suites.zeroshot.metrics import softmax


def image_outcomes(
    logits: np.ndarray, labels: np.ndarray, temperature: float, n_bins: int = N_BINS
) -> Outcomes:
    """The outcomes of the images behind one record, from the logits its metrics are computed on
    (the softmax as `calibration_metrics` takes it: of float64 logits, divided by T for `_ts`)."""
    logits = np.asarray(logits, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.int64)
    columns: dict[str, np.ndarray] = {}
    for suffix, scaled in (("", logits), ("_ts", logits / temperature)):
        probs = softmax(scaled)
        columns[f"confidence{suffix}"] = probs.max(axis=1)
        # the top class of the (scaled) softmax, as the ECE takes it
        columns[f"correct{suffix}"] = probs.argmax(axis=1) == labels
    columns["n_bins"] = np.full(len(labels), n_bins, dtype=np.int32)
    return Outcomes("image", columns)


def ece_percent(confidence: np.ndarray, correct: np.ndarray, n_bins: int = N_BINS) -> float:
    """The ECE (%) of top-1 confidences and correctness, by `calibration_error`: it reads only the
    top probability and whether the top class is the label, so two columns (the confidence, then a
    0 that never beats it) and label 0 for a right image, 1 for a wrong one, carry exactly that."""
    confidence = np.asarray(confidence, dtype=np.float64)
    probs = np.stack([confidence, np.zeros_like(confidence)], axis=1)
    labels = np.where(np.asarray(correct, dtype=bool), 0, 1)
    return 100.0 * calibration_error(probs, labels, n_bins)


def ece_percent_batch(
    confidence: np.ndarray, correct: np.ndarray, n_bins: int = N_BINS, axis: int = -1
) -> np.ndarray:
    """`ece_percent` of many resamples at once (items on `axis`): the same bins (of the float32
    confidence, as `calibration_error` takes it), sums in float64, so a value differs from the
    record's float32 one only in the last bits. What a bootstrap computes thousands of times."""
    confidence = np.moveaxis(np.asarray(confidence, dtype=np.float64), axis, -1)
    correct = np.moveaxis(np.asarray(correct, dtype=np.float64), axis, -1)
    batch = confidence.reshape(-1, confidence.shape[-1])
    hits = correct.reshape(-1, correct.shape[-1])
    edges = torch_linspace_edges(n_bins)
    index = np.searchsorted(edges, batch.astype(np.float32), side="right") - 1
    width = n_bins + 1
    flat = (index + width * np.arange(len(batch))[:, None]).ravel()
    size = len(batch) * width
    count = np.bincount(flat, minlength=size).reshape(-1, width)
    gap = np.bincount(flat, weights=(hits - batch).ravel(), minlength=size).reshape(-1, width)
    # sum over bins of |acc - conf| * count / n = sum of |sum(correct - confidence)| / n
    values = 100.0 * np.abs(gap).sum(axis=1) / count.sum(axis=1)
    return values.reshape(confidence.shape[:-1])


def _bins(outcomes: Outcomes) -> int:
    values = np.unique(outcomes.column("n_bins", "of a calibration record"))
    if len(values) != 1:
        raise VlstressError(
            f"calibration outcomes: one number of ECE bins expected, found {values.tolist()}"
        )
    return int(values[0])


def _ece(outcomes: Outcomes, suffix: str) -> Resampling:
    n_bins = _bins(outcomes)
    source = "of a calibration record"

    def statistic(confidence: np.ndarray, correct: np.ndarray, axis: int = -1) -> np.ndarray:
        return ece_percent_batch(confidence, correct, n_bins, axis)

    return Resampling(
        (
            outcomes.column(f"confidence{suffix}", source),
            outcomes.column(f"correct{suffix}", source),
        ),
        statistic,
        paired=True,
        vectorized=True,
    )


def ece_resampling(outcomes: Outcomes) -> Resampling:
    """The images (confidence and correctness together) and the record's `ece`."""
    return _ece(outcomes, "")


def ece_ts_resampling(outcomes: Outcomes) -> Resampling:
    """The images (scaled confidence and correctness together) and the record's `ece_ts`."""
    return _ece(outcomes, "_ts")
