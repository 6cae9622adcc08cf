"""The per-stimulus outcomes of a shape-bias record and what a bootstrap of its shape bias
resamples.

The unit is the cue-conflict stimulus. A block (`stimulus_outcomes`) keeps, per stimulus of the
record's category, whether the model decided for its shape category, for its texture category,
and its shape class (paired comparisons check two models saw the same stimuli); a stimulus whose
shape and texture agree decides neither (it carries no conflict). Shape bias is shape decisions /
(shape + texture decisions), so the full block gives the record's value to the bit, and a paired
bootstrap of two models' blocks compares their shape biases on the same stimuli. NumPy only: the
planner imports this module through `suite.py`.
"""

from __future__ import annotations

import numpy as np

from vlstress.outcomes import Outcomes, Resampling

SOURCE = "of a shape-bias record"


def stimulus_outcomes(chosen: np.ndarray, shapes: np.ndarray, textures: np.ndarray) -> Outcomes:
    """The outcomes of one record's stimuli, in the stimuli's order (decisions and categories as
    class indices)."""
    chosen, shapes, textures = (np.asarray(x, dtype=np.int64) for x in (chosen, shapes, textures))
    conflict = shapes != textures
    return Outcomes(
        "stimulus",
        {
            "shape_decision": conflict & (chosen == shapes),
            "texture_decision": conflict & (chosen == textures),
            "label": shapes,
        },
    )


def _shape_bias(shape: np.ndarray, texture: np.ndarray, axis: int = -1) -> np.ndarray:
    """Shape decisions / (shape + texture decisions); NaN where a resample has neither."""
    shape_count = np.sum(shape, axis=axis, dtype=np.float64)
    decided = shape_count + np.sum(texture, axis=axis, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(decided > 0, shape_count / decided, np.nan)


def shape_bias_resampling(outcomes: Outcomes) -> Resampling:
    """The stimuli (both decisions together) and the record's `shape_bias` (a fraction)."""
    return Resampling(
        (
            outcomes.column("shape_decision", SOURCE),
            outcomes.column("texture_decision", SOURCE),
        ),
        _shape_bias,
        paired=True,
        vectorized=True,
    )
