"""The per-image outcomes of an OOD detection record and what a bootstrap of its AUROC and FPR@95
resamples.

A record's block (`image_outcomes`) holds the score of every in-distribution image, then of every
OOD image (`is_ood` tells them apart), exactly the scores its metrics are computed from. A
bootstrap resamples the two sets each within itself (strata: a resample keeps both sizes), and
the statistics recompute the record's values (%), equal to `scores.detection_metrics`' scikit-learn
ones (tested) but in NumPy, fast enough for thousands of resamples. NumPy only: the planner imports
this module through `suite.py`.
"""

from __future__ import annotations

import numpy as np

from vlstress.errors import VlstressError
from vlstress.outcomes import Outcomes, Resampling
from vlstress.suites.ood import scores


def image_outcomes(id_scores: np.ndarray, ood_scores: np.ndarray) -> Outcomes:
    """The outcomes of one record: every ID image's score, then every OOD image's."""
    id_scores = np.asarray(id_scores, dtype=np.float64)
    ood_scores = np.asarray(ood_scores, dtype=np.float64)
    return Outcomes(
        "image",
        {
            "score": np.concatenate([id_scores, ood_scores]),
            "is_ood": np.concatenate(
                [np.zeros(id_scores.size, dtype=bool), np.ones(ood_scores.size, dtype=bool)]
            ),
        },
    )


def _last(values: np.ndarray, axis: int) -> np.ndarray:
    return np.moveaxis(np.asarray(values, dtype=np.float64), axis, -1)


def _scalar_or_batch(found: np.ndarray) -> np.ndarray | float:
    return float(found) if found.ndim == 0 else found


def auroc_percent(
    id_scores: np.ndarray, ood_scores: np.ndarray, axis: int = -1
) -> np.ndarray | float:
    """The record's `auroc` (%), as Mann-Whitney's U: the share of (ID, OOD) pairs the score
    orders right, ties counting half. Equal to scikit-learn's AUROC of `detection_metrics`
    (tested), at a fraction of its cost: a bootstrap computes it for thousands of resamples at
    once (items on `axis`, one value per resample)."""
    from scipy.stats import rankdata

    id_scores, ood_scores = _last(id_scores, axis), _last(ood_scores, axis)
    n_id, n_ood = id_scores.shape[-1], ood_scores.shape[-1]
    # the ID scores' ranks among all scores (ties: their mean rank), less their ranks among
    # themselves: how many OOD scores lie below each, ties counting half
    ranks = rankdata(np.concatenate([id_scores, ood_scores], axis=-1), axis=-1)
    u = ranks[..., :n_id].sum(axis=-1) - n_id * (n_id + 1) / 2
    return _scalar_or_batch(100.0 * u / (n_id * n_ood))


def fpr95_percent(
    id_scores: np.ndarray, ood_scores: np.ndarray, axis: int = -1
) -> np.ndarray | float:
    """The record's `fpr95` (%): the share of OOD scores at or above the highest threshold that
    keeps at least 95% of the ID scores, as `scores.fpr_at_tpr` reads scikit-learn's ROC curve
    (equal, tested), in NumPy, for many resamples at once (items on `axis`). That threshold is
    the k-th highest ID score, k the fewest ID images that make 95%: a higher one keeps fewer."""
    id_scores, ood_scores = np.sort(_last(id_scores, axis), axis=-1), _last(ood_scores, axis)
    n_id = id_scores.shape[-1]
    kept = np.arange(1, n_id + 1) / n_id
    k = int(np.searchsorted(kept, scores.TPR_LEVEL, side="left")) + 1
    threshold = id_scores[..., n_id - k]
    passed = (ood_scores >= threshold[..., None]).sum(axis=-1)
    return _scalar_or_batch(100.0 * passed / ood_scores.shape[-1])


def _sides(outcomes: Outcomes) -> tuple[np.ndarray, np.ndarray]:
    source = "of an OOD detection record"
    values = outcomes.column("score", source)
    is_ood = outcomes.column("is_ood", source).astype(bool)
    if is_ood.all() or not is_ood.any():
        raise VlstressError(
            f"OOD outcomes: {int((~is_ood).sum())} ID and {int(is_ood.sum())} OOD images; a "
            "bootstrap needs both"
        )
    return values[~is_ood], values[is_ood]


def auroc_resampling(outcomes: Outcomes) -> Resampling:
    """The ID and the OOD scores, resampled each within itself, and the record's `auroc`."""
    return Resampling(_sides(outcomes), auroc_percent, paired=False, vectorized=True)


def fpr95_resampling(outcomes: Outcomes) -> Resampling:
    """The ID and the OOD scores, resampled each within itself, and the record's `fpr95`."""
    return Resampling(_sides(outcomes), fpr95_percent, paired=False, vectorized=True)
