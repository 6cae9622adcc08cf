"""Text-to-image metrics of the image stress-test, with the official RoCOCO semantics.

Gallery = all original images (rows 0..n-1) followed by all mixed images (rows n..2n-1).
Each caption's only ground truth is its own original image. From the ranks
(vlstress.metrics.retrieval_ranks: items scoring strictly above the ground truth):

    t2i_R@K            Recall@K against the original + mixed gallery (percent)
    t2i_R@1_original   Recall@1 against the original-only gallery
    t2i_false_R@1      percent of captions whose top-1 image is any mixed image
                       (official eval_clip_t2i.py: `inds[0] >= 5000`)
    t2i_drop_rate      100 * (R@1_original - R@1) / R@1_original
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .. import metrics


def t2i_image_stress(
    image_emb: np.ndarray,
    variant_emb: np.ndarray,
    text_emb: np.ndarray,
    caption_image: Sequence[int],
    ks: Sequence[int] = metrics.DEFAULT_KS,
    chunk_size: int = 1024,
    device: str = "cpu",
) -> dict[str, float]:
    if variant_emb.shape != image_emb.shape:
        raise ValueError(f"mixed-image embeddings {variant_emb.shape} do not match the originals {image_emb.shape}")
    n_images = len(image_emb)
    gt = [[int(i)] for i in caption_image]
    gallery = np.concatenate([image_emb, variant_emb], axis=0)
    stressed = metrics.retrieval_ranks(text_emb, gallery, gt, chunk_size=chunk_size, device=device)
    original = metrics.retrieval_ranks(text_emb, image_emb, gt, chunk_size=chunk_size, device=device)
    out = {f"t2i_{k}": v for k, v in metrics.recall_at_k(stressed.ranks, ks).items()}
    r1 = metrics.recall_at_k(stressed.ranks, [1])["R@1"]
    r1_original = metrics.recall_at_k(original.ranks, [1])["R@1"]
    is_mixed = np.arange(2 * n_images) >= n_images
    out["t2i_R@1_original"] = r1_original
    out["t2i_false_R@1"] = metrics.false_recall_at_1(stressed.top1, is_mixed)
    out["t2i_drop_rate"] = metrics.drop_rate(r1_original, r1)
    return out
