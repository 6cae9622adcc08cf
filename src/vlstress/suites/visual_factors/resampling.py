"""The per-image outcomes of the visual-factor records and what a bootstrap of an error ratio
resamples.

Each record (a factor, or `all`) keeps a block over every annotated image the record's metrics
read: whether the model is right (`correct`), whether the image shows the record's factor (`has`;
every image for `all`) and its class (`label`). An error ratio is the error on the factor's images
over the error on all images, so a bootstrap resamples images (correctness and factor together) and
recomputes that ratio: the full block gives the record's value back. NumPy only: the planner
imports this module through `suite.py`.
"""

from __future__ import annotations

import numpy as np

from vlstress.outcomes import Outcomes, Resampling

SOURCE = "of a visual-factor record"


def image_outcomes(correct: np.ndarray, has: np.ndarray, labels: np.ndarray) -> Outcomes:
    """One record's block: every annotated image, in the evaluation's order."""
    return Outcomes(
        "image",
        {
            "correct": np.asarray(correct, dtype=bool),
            "has": np.asarray(has, dtype=bool),
            "label": np.asarray(labels, dtype=np.int64),
        },
    )


def error_ratio_batch(correct: np.ndarray, has: np.ndarray, axis: int = -1) -> np.ndarray:
    """(1 - top-1 on the factor's images) / (1 - top-1 on all), of many resamples at once (images
    on `axis`); NaN where a resample has no image with the factor or no error at all."""
    right = np.moveaxis(np.asarray(correct, dtype=np.float64), axis, -1)
    shown = np.moveaxis(np.asarray(has, dtype=np.float64), axis, -1)
    with np.errstate(invalid="ignore", divide="ignore"):
        factor_error = 1.0 - (right * shown).sum(axis=-1) / shown.sum(axis=-1)
        overall_error = 1.0 - right.mean(axis=-1)
        return factor_error / overall_error


def error_ratio_resampling(outcomes: Outcomes) -> Resampling:
    """The images (correctness and factor together) and the record's `error_ratio`."""
    return Resampling(
        (outcomes.column("correct", SOURCE), outcomes.column("has", SOURCE)),
        error_ratio_batch,
        paired=True,
        vectorized=True,
    )
