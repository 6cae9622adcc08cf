"""Retrieval metrics from embeddings, computed in query chunks on torch.

Rank convention (documented in the README): the rank of a query is the number
of gallery items scoring strictly above its best ground-truth item, so rank 0
is a hit at 1 and ties go to the ground truth. Never a full argsort per row,
never the whole similarity matrix in memory: only `chunk_size` rows at a time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import torch

DEFAULT_KS = (1, 5, 10)


@dataclass(frozen=True)
class RankResult:
    ranks: np.ndarray  # (n_queries,) int64: items scoring above the best ground truth
    top1: np.ndarray  # (n_queries,) int64: gallery index of the highest score (ties -> ground truth, then lowest index)


def pad_ground_truth(gt: Sequence[Sequence[int]]) -> torch.Tensor:
    """Ragged ground-truth lists -> (n, max_len) tensor padded with -1."""
    width = max(len(g) for g in gt)
    padded = torch.full((len(gt), width), -1, dtype=torch.long)
    for row, items in enumerate(gt):
        if not items:
            raise ValueError(f"query {row} has no ground-truth item")
        padded[row, : len(items)] = torch.as_tensor(list(items), dtype=torch.long)
    return padded


def ranks_from_scores(scores: torch.Tensor, gt: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Ranks and top-1 indices of one chunk of score rows (gt padded with -1)."""
    valid = gt >= 0
    gt_scores = torch.gather(scores, 1, gt.clamp(min=0)).masked_fill(~valid, float("-inf"))
    best_gt, best_pos = gt_scores.max(dim=1)
    # count as uint8 -> int32 (exact up to 2**31 items): ~2x faster on CPU than summing bool into int64
    ranks = (scores > best_gt[:, None]).view(torch.uint8).sum(dim=1, dtype=torch.int32).long()
    top_score, top_index = scores.max(dim=1)  # first maximum -> lowest index among ties
    best_gt_index = torch.gather(gt, 1, best_pos[:, None]).squeeze(1)
    top1 = torch.where(top_score > best_gt, top_index, best_gt_index)
    return ranks, top1


def retrieval_ranks(
    queries: np.ndarray | torch.Tensor,
    gallery: np.ndarray | torch.Tensor,
    gt: Sequence[Sequence[int]] | torch.Tensor,
    *,
    chunk_size: int = 1024,
    device: str = "cpu",
    score_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] | None = None,
) -> RankResult:
    """Ranks of every query against the gallery; scores = queries @ gallery.T by default."""
    q = torch.as_tensor(queries).to(device)
    g = torch.as_tensor(gallery).to(device)
    gt_tensor = gt if isinstance(gt, torch.Tensor) else pad_ground_truth(gt)
    gt_tensor = gt_tensor.to(device)
    score_fn = score_fn or (lambda a, b: a @ b.T)
    ranks, top1 = [], []
    for start in range(0, q.shape[0], chunk_size):
        scores = score_fn(q[start : start + chunk_size], g)
        r, t = ranks_from_scores(scores, gt_tensor[start : start + chunk_size])
        ranks.append(r.cpu())
        top1.append(t.cpu())
    return RankResult(ranks=torch.cat(ranks).numpy().astype(np.int64), top1=torch.cat(top1).numpy().astype(np.int64))


def recall_at_k(ranks: np.ndarray, ks: Sequence[int] = DEFAULT_KS) -> dict[str, float]:
    """Recall@K in percent: share of queries whose rank is below K."""
    ranks = np.asarray(ranks)
    return {f"R@{k}": float(100.0 * np.mean(ranks < k)) for k in ks}


def false_recall_at_1(top1: np.ndarray, is_distractor: np.ndarray) -> float:
    """Percent of queries whose top-1 item is a distractor (altered caption, mixed image)."""
    return float(100.0 * np.mean(np.asarray(is_distractor)[np.asarray(top1)]))


def drop_rate(r1_original: float, r1_stressed: float) -> float:
    """Relative fall of R@1 in percent: 100 * (orig - stressed) / orig."""
    if r1_original == 0:
        return float("nan")
    return float(100.0 * (r1_original - r1_stressed) / r1_original)


def image_text_recalls(image_emb: np.ndarray, text_emb: np.ndarray, caption_image: Sequence[int], ks: Sequence[int] = DEFAULT_KS, chunk_size: int = 1024) -> dict[str, float]:
    """Image-to-text and text-to-image Recall@K on the original captions."""
    caption_image = np.asarray(caption_image)
    captions_of = [np.flatnonzero(caption_image == i).tolist() for i in range(len(image_emb))]
    i2t = retrieval_ranks(image_emb, text_emb, captions_of, chunk_size=chunk_size)
    t2i = retrieval_ranks(text_emb, image_emb, [[int(i)] for i in caption_image], chunk_size=chunk_size)
    out = {f"i2t_{k}": v for k, v in recall_at_k(i2t.ranks, ks).items()}
    out.update({f"t2i_{k}": v for k, v in recall_at_k(t2i.ranks, ks).items()})
    return out


def i2t_text_stress(
    image_emb: np.ndarray,
    original_emb: np.ndarray,
    original_image: Sequence[int],
    altered_emb: np.ndarray,
    ks: Sequence[int] = DEFAULT_KS,
    chunk_size: int = 1024,
    device: str = "cpu",
) -> dict[str, float | None]:
    """Text stress-test metrics for images `0..len(image_emb)-1` (official RoCOCO semantics).

    Original caption j belongs to image original_image[j]; `altered_emb` rows are distractors
    (their owner does not matter for the metrics).

    Gallery = all original captions (rows 0..n-1) followed by all altered captions (rows
    n..n+m-1). An image's ground truth is its own original captions. From the ranks of
    retrieval_ranks (rank = gallery items scoring strictly above the best
    ground-truth caption, so ties go to the ground truth):

        i2t_R@K            Recall@K against the original + altered gallery (percent)
        i2t_R@1_original   Recall@1 against the original-only gallery (same images)
        i2t_false_R@1      percent of images whose top-1 caption is an altered caption
        i2t_drop_rate      100 * (R@1_original - R@1) / R@1_original (None if R@1_original = 0)

    Top-1 and ties (ranks_from_scores): the top-1 caption is the best
    ground-truth caption unless some caption scores strictly above it; among captions tied
    at the top score the lowest gallery row wins. Originals come before altered captions,
    so an image counts as "false top-1" exactly when its best altered caption scores
    strictly above every original caption of the gallery (its own and other images').
    A tie between an altered caption and the ground truth counts as a hit, never as false.
    """
    original_image = np.asarray(original_image, dtype=np.int64)
    if len(original_image) != len(original_emb):
        raise ValueError(f"{len(original_emb)} original captions but {len(original_image)} owners")
    if altered_emb.ndim != 2 or altered_emb.shape[1] != original_emb.shape[1]:
        raise ValueError(f"altered embeddings {altered_emb.shape} do not match the originals {original_emb.shape}")
    n_original = len(original_emb)
    gt = [np.flatnonzero(original_image == i).tolist() for i in range(len(image_emb))]
    gallery = np.concatenate([original_emb, altered_emb], axis=0)
    stressed = retrieval_ranks(image_emb, gallery, gt, chunk_size=chunk_size, device=device)
    original = retrieval_ranks(image_emb, original_emb, gt, chunk_size=chunk_size, device=device)
    out: dict[str, float | None] = {f"i2t_{k}": v for k, v in recall_at_k(stressed.ranks, ks).items()}
    r1 = recall_at_k(stressed.ranks, [1])["R@1"]
    r1_original = recall_at_k(original.ranks, [1])["R@1"]
    is_altered = np.arange(len(gallery)) >= n_original
    out["i2t_R@1_original"] = r1_original
    out["i2t_false_R@1"] = false_recall_at_1(stressed.top1, is_altered)
    drop = drop_rate(r1_original, r1)
    out["i2t_drop_rate"] = None if np.isnan(drop) else drop
    return out
