"""The per-image outcomes of an AutoCLIP record and what a bootstrap of its gain resamples.

The unit is the image. A block (`autoclip_outcomes`) keeps, per image of the record's set, whether
the averaged classifier, the mean template cosine (uniform weights) and AutoCLIP get it right,
and its class. The gain (AutoCLIP's top-1 minus the averaged classifier's, points) is a paired
difference on the same images: its bootstrap resamples the images with both outcomes, and the
full block gives the record's gain. NumPy only: the planner imports this module through
`suite.py`.
"""

from __future__ import annotations

import numpy as np

from vlstress.outcomes import Outcomes, Resampling

SOURCE = "of an AutoCLIP record"


def autoclip_outcomes(
    average: np.ndarray, uniform: np.ndarray, weighted: np.ndarray, labels: np.ndarray
) -> Outcomes:
    """One record's images in the set's order: each classifier's top-1 correctness, the class."""
    return Outcomes(
        "image",
        {
            "correct_average": np.asarray(average, dtype=bool),
            "correct_uniform": np.asarray(uniform, dtype=bool),
            "correct_autoclip": np.asarray(weighted, dtype=bool),
            "label": np.asarray(labels, dtype=np.int64),
        },
    )


def _gain(autoclip: np.ndarray, average: np.ndarray, axis: int = -1) -> np.ndarray:
    found = np.mean(autoclip, axis=axis, dtype=np.float64)
    return np.asarray(100.0 * (found - np.mean(average, axis=axis, dtype=np.float64)))


def gain_resampling(outcomes: Outcomes) -> Resampling:
    """The images (both classifiers' outcomes together) and the record's `gain` (points)."""
    return Resampling(
        (outcomes.column("correct_autoclip", SOURCE), outcomes.column("correct_average", SOURCE)),
        _gain,
        paired=True,
        vectorized=True,
    )
