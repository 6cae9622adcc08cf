"""Out-of-distribution detection with a zero-shot classifier: scores and detection metrics.

An image is scored against the in-distribution (ID) class weights only; a higher score means
"more in-distribution". Scores (registry `SCORES`), from the cosines s_c = cos(image, w_c):
- `mcm`: Maximum Concept Matching (Ming et al., 2022), max_c softmax(s / T)_c, T = 1 by default;
- `msp`: maximum softmax probability at the model's own logit scale (the classic baseline);
- `max_logit`: max_c logit_scale * s_c;
- `energy`: the negative free energy, T * logsumexp_c(logit_scale * s_c / T) with T = 1.
Metrics (scikit-learn, ID = positive class), in percent: AUROC, FPR at 95% TPR (share of OOD
images scored above the threshold that keeps 95% of ID images), AUPR-In (average precision
with ID positive) and AUPR-Out (OOD positive, scores negated).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from vlstress.errors import VlstressError
from vlstress.suites.zeroshot.metrics import softmax

TPR_LEVEL = 0.95


def _logsumexp(values: np.ndarray) -> np.ndarray:
    top = values.max(axis=1, keepdims=True)
    return (top + np.log(np.exp(values - top).sum(axis=1, keepdims=True)))[:, 0]


@dataclass(frozen=True)
class Score:
    # (cosines, logit_scale, temperature) -> scores
    fn: Callable[[np.ndarray, float, float], np.ndarray]
    description: str


SCORES: dict[str, Score] = {
    "mcm": Score(
        lambda cos, scale, t: softmax(cos / t).max(axis=1), "max softmax of cosines / T (MCM)"
    ),
    "msp": Score(
        lambda cos, scale, t: softmax(scale * cos).max(axis=1),
        "max softmax at the model's logit scale",
    ),
    "max_logit": Score(
        lambda cos, scale, t: (scale * cos).max(axis=1), "max logit at the model's logit scale"
    ),
    "energy": Score(
        lambda cos, scale, t: t * _logsumexp(scale * cos / t),
        "negative energy T*logsumexp(logits / T)",
    ),
}


def score(
    name: str, cosines: np.ndarray, logit_scale: float, temperature: float = 1.0
) -> np.ndarray:
    if name not in SCORES:
        raise VlstressError(f"unknown OOD score {name!r}; known: {', '.join(SCORES)}")
    if temperature <= 0:
        raise VlstressError(f"OOD temperature must be > 0, got {temperature}")
    return np.asarray(
        SCORES[name].fn(
            np.asarray(cosines, dtype=np.float64), float(logit_scale), float(temperature)
        )
    )


def _labelled(id_scores: np.ndarray, ood_scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    id_scores, ood_scores = (
        np.asarray(id_scores, dtype=np.float64),
        np.asarray(ood_scores, dtype=np.float64),
    )
    if id_scores.size == 0 or ood_scores.size == 0:
        raise VlstressError(
            f"OOD detection needs images on both sides: {id_scores.size} ID, {ood_scores.size} OOD"
        )
    labels = np.concatenate([np.ones(id_scores.size), np.zeros(ood_scores.size)])
    return labels, np.concatenate([id_scores, ood_scores])


def fpr_at_tpr(id_scores: np.ndarray, ood_scores: np.ndarray, level: float = TPR_LEVEL) -> float:
    """Share of OOD images at or above the highest threshold that keeps at least `level` of the ID
    images."""
    from sklearn.metrics import roc_curve

    labels, scores = _labelled(id_scores, ood_scores)
    fpr, tpr, _ = roc_curve(labels, scores, drop_intermediate=False)
    return float(fpr[np.searchsorted(tpr, level, side="left")])


def auroc(id_scores: np.ndarray, ood_scores: np.ndarray) -> float:
    """Area under the ROC curve of ID-vs-OOD scores (ID positive), a fraction."""
    from sklearn.metrics import roc_auc_score

    labels, scores = _labelled(id_scores, ood_scores)
    return float(roc_auc_score(labels, scores))


def detection_metrics(id_scores: np.ndarray, ood_scores: np.ndarray) -> dict[str, float]:
    """AUROC, FPR@95%TPR, AUPR-In and AUPR-Out (percent) of ID-vs-OOD scores (ID positive)."""
    from sklearn.metrics import average_precision_score

    labels, scores = _labelled(id_scores, ood_scores)
    return {
        "auroc": 100.0 * auroc(id_scores, ood_scores),
        "fpr95": 100.0 * fpr_at_tpr(id_scores, ood_scores),
        "aupr_in": 100.0 * float(average_precision_score(labels, scores)),
        "aupr_out": 100.0 * float(average_precision_score(1 - labels, -scores)),
    }


def roc_points(
    id_scores: np.ndarray, ood_scores: np.ndarray, max_points: int = 201
) -> dict[str, list[float]]:
    """The ROC curve (FPR, TPR), thinned to at most `max_points` points for figures and sidecars."""
    from sklearn.metrics import roc_curve

    labels, scores = _labelled(id_scores, ood_scores)
    fpr, tpr, _ = roc_curve(labels, scores)
    if len(fpr) > max_points:
        keep = np.unique(np.linspace(0, len(fpr) - 1, max_points).round().astype(int))
        fpr, tpr = fpr[keep], tpr[keep]
    return {"fpr": [float(v) for v in fpr], "tpr": [float(v) for v in tpr]}
