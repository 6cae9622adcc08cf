"""Classification metrics from scores (images x classes): top-k accuracy, mean per-class recall,
per-class accuracy, attack success. All in percent.

Ties: a class ranks above the true class only when its score is strictly higher
(the true class wins ties, as `torch.topk` would not guarantee; stated so results do
not depend on the sort order of equal floats).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vlstress.errors import VlstressError


def true_class_rank(scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """0-based rank of the true class of each row: the number of classes scoring strictly higher."""
    true = scores[np.arange(len(labels)), labels]
    return (scores > true[:, None]).sum(axis=1)


def classification_metrics(
    scores: np.ndarray,
    labels: Sequence[int],
    *,
    ks: Sequence[int] = (1, 5),
    written: Sequence[int] | None = None,
) -> tuple[dict[str, float | None], list[float | None]]:
    """(metrics, per-class accuracy) of `scores` (N x C) against `labels` (N).

    metrics: `top{k}` for each k (None when k > C), `mean_per_class_recall` (mean over the
    classes present of their top-1 recall), and with `written` (the class written on each
    image by a typographic attack) `attack_success`: % of images predicted as the written class.
    per-class accuracy: top-1 % of each class, None for classes without images.
    """
    scores = np.asarray(scores)
    label_ids = np.asarray(labels, dtype=np.int64)
    if scores.ndim != 2 or scores.shape[0] != len(label_ids):
        raise VlstressError(f"scores of shape {scores.shape} for {len(label_ids)} labels")
    n, n_classes = scores.shape
    if n == 0:
        raise VlstressError("no images to score")
    if label_ids.min() < 0 or label_ids.max() >= n_classes:
        raise VlstressError(f"labels outside 0..{n_classes - 1}")
    rank = true_class_rank(scores, label_ids)
    metrics: dict[str, float | None] = {
        f"top{k}": (100.0 * float(np.mean(rank < k)) if k <= n_classes else None) for k in ks
    }
    correct = rank == 0
    per_class: list[float | None] = []
    for c in range(n_classes):
        mask = label_ids == c
        per_class.append(100.0 * float(correct[mask].mean()) if mask.any() else None)
    present = [value for value in per_class if value is not None]
    metrics["mean_per_class_recall"] = float(np.mean(present))
    if written is not None:
        written_ids = np.asarray(written, dtype=np.int64)
        if written_ids.shape != label_ids.shape:
            raise VlstressError(f"{len(written_ids)} written labels for {len(label_ids)} images")
        predicted = scores.argmax(axis=1)
        metrics["attack_success"] = 100.0 * float(np.mean(predicted == written_ids))
    return metrics, per_class


def item_outcomes(
    scores: np.ndarray, labels: Sequence[int], written: Sequence[int] | None = None
) -> dict[str, np.ndarray]:
    """Per image: the truth's 1-based rank (ties as `true_class_rank` counts them), whether top-1
    is right (rank 1, as `top1` counts it), the truth and the top-scoring class, and with `written`
    whether the prediction is the written class (as `attack_success` counts it)."""
    scores = np.asarray(scores)
    label_ids = np.asarray(labels, dtype=np.int64)
    rank = true_class_rank(scores, label_ids)
    predicted = scores.argmax(axis=1)
    columns = {
        "truth_rank": (rank + 1).astype(np.int32),
        "correct": rank == 0,
        "label": label_ids.astype(np.int32),
        "prediction": predicted.astype(np.int32),
    }
    if written is not None:
        columns["written_hit"] = predicted == np.asarray(written, dtype=np.int64)
    return columns


def shift_metrics(top1: float, clean_top1: float | None) -> dict[str, float | None]:
    """Clean accuracy, drop (points) and relative drop (%) of a shifted / attacked set."""
    if clean_top1 is None:
        return {"top1_clean": None, "drop": None, "relative_drop": None}
    drop = clean_top1 - top1
    return {
        "top1_clean": clean_top1,
        "drop": drop,
        "relative_drop": 100.0 * drop / clean_top1 if clean_top1 > 0 else None,
    }


def softmax(logits: np.ndarray) -> np.ndarray:
    logits = np.asarray(logits, dtype=np.float64)
    shifted = logits - logits.max(axis=1, keepdims=True)
    exp = np.exp(shifted)
    return exp / exp.sum(axis=1, keepdims=True)
