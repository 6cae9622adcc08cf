"""Image-to-text metrics of the text stress-test, with the official RoCOCO semantics.

Gallery = all original captions (rows 0..n-1) followed by all altered captions (rows
n..n+m-1). An image's ground truth is its own original captions. From the ranks of
vlstress.metrics.retrieval_ranks (rank = gallery items scoring strictly above the best
ground-truth caption, so ties go to the ground truth):

    i2t_R@K            Recall@K against the original + altered gallery (percent)
    i2t_R@1_original   Recall@1 against the original-only gallery (same images)
    i2t_false_R@1      percent of images whose top-1 caption is an altered caption
    i2t_drop_rate      100 * (R@1_original - R@1) / R@1_original (None if R@1_original = 0)

Top-1 and ties (vlstress.metrics.ranks_from_scores): the top-1 caption is the best
ground-truth caption unless some caption scores strictly above it; among captions tied
at the top score the lowest gallery row wins. Originals come before altered captions,
so an image counts as "false top-1" exactly when its best altered caption scores
strictly above every original caption of the gallery (its own and other images').
A tie between an altered caption and the ground truth counts as a hit, never as false.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .. import metrics


def i2t_text_stress(
    image_emb: np.ndarray,
    original_emb: np.ndarray,
    original_image: Sequence[int],
    altered_emb: np.ndarray,
    ks: Sequence[int] = metrics.DEFAULT_KS,
    chunk_size: int = 1024,
    device: str = "cpu",
) -> dict[str, float | None]:
    """Metrics for images `0..len(image_emb)-1`; original caption j belongs to image original_image[j].

    `altered_emb` rows are distractors (their owner does not matter for the metrics).
    """
    original_image = np.asarray(original_image, dtype=np.int64)
    if len(original_image) != len(original_emb):
        raise ValueError(f"{len(original_emb)} original captions but {len(original_image)} owners")
    if altered_emb.ndim != 2 or altered_emb.shape[1] != original_emb.shape[1]:
        raise ValueError(f"altered embeddings {altered_emb.shape} do not match the originals {original_emb.shape}")
    n_original = len(original_emb)
    gt = [np.flatnonzero(original_image == i).tolist() for i in range(len(image_emb))]
    gallery = np.concatenate([original_emb, altered_emb], axis=0)
    stressed = metrics.retrieval_ranks(image_emb, gallery, gt, chunk_size=chunk_size, device=device)
    original = metrics.retrieval_ranks(image_emb, original_emb, gt, chunk_size=chunk_size, device=device)
    out: dict[str, float | None] = {f"i2t_{k}": v for k, v in metrics.recall_at_k(stressed.ranks, ks).items()}
    r1 = metrics.recall_at_k(stressed.ranks, [1])["R@1"]
    r1_original = metrics.recall_at_k(original.ranks, [1])["R@1"]
    is_altered = np.arange(len(gallery)) >= n_original
    out["i2t_R@1_original"] = r1_original
    out["i2t_false_R@1"] = metrics.false_recall_at_1(stressed.top1, is_altered)
    drop = metrics.drop_rate(r1_original, r1)
    out["i2t_drop_rate"] = None if math.isnan(drop) else drop
    return out
