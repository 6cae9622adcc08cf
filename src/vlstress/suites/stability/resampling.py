"""The per-sequence outcomes of a stability record and what a bootstrap of its flip probability
and top-5 distance resamples.

The unit is the sequence (a clean image and its perturbed frames), as in ImageNet-P: FP and T5D
are means over sequences of a per-sequence value, so a block (`sequence_outcomes`) keeps, per
sequence, its share of flipped frame pairs, its mean top-5 distance, whether its first frame is
classified right and its true class (paired comparisons check two models saw the same
sequences). The statistics are the record's means, so the full block gives the record's values to
the bit. NumPy only: the planner imports this module through `suite.py`.
"""

from __future__ import annotations

import numpy as np

from vlstress.outcomes import Outcomes, Resampling

SOURCE = "of a stability record"


def sequence_outcomes(
    flip_shares: np.ndarray, top5_distances: np.ndarray, first_correct: np.ndarray, labels
) -> Outcomes:
    """The outcomes of one record, one value per sequence in the record's order."""
    return Outcomes(
        "sequence",
        {
            "flip_share": np.asarray(flip_shares, dtype=np.float64),
            "top5_distance": np.asarray(top5_distances, dtype=np.float64),
            "first_correct": np.asarray(first_correct, dtype=bool),
            "label": np.asarray(labels, dtype=np.int64),
        },
    )


def _percent_mean(values: np.ndarray, axis: int = -1) -> np.ndarray:
    return 100.0 * np.mean(values, axis=axis)


def flip_resampling(outcomes: Outcomes) -> Resampling:
    """The sequences and the record's `flip_probability` (%): 100 x the mean flip share."""
    return Resampling(
        (outcomes.column("flip_share", SOURCE),), _percent_mean, paired=True, vectorized=True
    )
