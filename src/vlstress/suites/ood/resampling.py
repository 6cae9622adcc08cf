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


def auroc_percent(id_scores: np.ndarray, ood_scores: np.ndarray) -> float:
    """The record's `auroc` (%), as Mann-Whitney's U: the share of (ID, OOD) pairs the score
    orders right, ties counting half. Equal to scikit-learn's AUROC of `detection_metrics`
    (tested), at a fraction of its cost: a bootstrap computes it thousands of times."""
    id_scores = np.asarray(id_scores, dtype=np.float64)
    ood_scores = np.asarray(ood_scores, dtype=np.float64)
    # rank of each ID score among the OOD scores: below, plus half the ties
    ordered = np.sort(ood_scores)
    below = np.searchsorted(ordered, id_scores, side="left")
    ties = np.searchsorted(ordered, id_scores, side="right") - below
    return 100.0 * float((below + 0.5 * ties).sum()) / (id_scores.size * ood_scores.size)


def fpr95_percent(id_scores: np.ndarray, ood_scores: np.ndarray) -> float:
    """The record's `fpr95` (%): the share of OOD scores at or above the highest threshold that
    keeps at least 95% of the ID scores, as `scores.fpr_at_tpr` reads scikit-learn's ROC curve
    (equal, tested), in NumPy."""
    id_scores = np.sort(np.asarray(id_scores, dtype=np.float64))
    ood_scores = np.sort(np.asarray(ood_scores, dtype=np.float64))
    thresholds = np.unique(np.concatenate([id_scores, ood_scores]))[::-1]  # highest first
    kept = (id_scores.size - np.searchsorted(id_scores, thresholds, side="left")) / id_scores.size
    first = int(np.searchsorted(kept, scores.TPR_LEVEL, side="left"))
    passed = ood_scores.size - np.searchsorted(ood_scores, thresholds[first], side="left")
    return 100.0 * float(passed) / ood_scores.size


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
    return Resampling(_sides(outcomes), auroc_percent, paired=False)


def fpr95_resampling(outcomes: Outcomes) -> Resampling:
    """The ID and the OOD scores, resampled each within itself, and the record's `fpr95`."""
    return Resampling(_sides(outcomes), fpr95_percent, paired=False)
