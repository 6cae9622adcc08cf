"""Retrieval metrics from embeddings, computed in query chunks (NumPy: no model library, so the
evaluation steps start without torch).

Rank convention (documented in the README): the rank of a query is the number of
gallery items ranked above its best ground-truth item, so rank 0 is a hit at 1. Never
a full argsort per row, never the whole similarity matrix in memory: only `chunk_size`
rows at a time.

Ties (`ties=`). Exactly equal scores need a rule, and the official RoCOCO scripts have
none: they rank with `np.argsort(score)[::-1]`, whose order among exactly equal scores
is an implementation detail of NumPy (quicksort/introsort, not stable, and different
between NumPy versions and CPUs), so there a tie between a ground-truth item and
another item lands either way. Both ends are available here:

    optimistic   (default) rank = items scoring strictly above the best ground truth;
                 a tie with the ground truth counts as a hit, and the top-1 is the
                 ground truth. The upper bound of the Recall@K argsort can give.
    pessimistic  every non-ground-truth item whose score equals the best ground-truth
                 score ranks above it (other ground-truth items tied with it do not
                 count), and the top-1 is such a tied item (the lowest gallery index
                 among them) rather than the ground truth. The lower bound of Recall@K.

The two differ only when scores tie exactly, which continuous embeddings of a trained
model practically never do; random-init or quantised models and duplicate captions
(identical rows in the gallery) do produce exact ties.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

DEFAULT_KS = (1, 5, 10)
TIE_POLICIES = ("optimistic", "pessimistic")


@dataclass(frozen=True)
class RankResult:
    ranks: np.ndarray  # (n_queries,) int64: gallery items ranked above the best ground truth
    # (n_queries,) int64: gallery index of the first-ranked item (see the tie policy)
    top1: np.ndarray

    def item_columns(self) -> dict[str, np.ndarray]:
        """Per query: `rank`, the 1-based rank of its best ground truth (int32), and `hit1`, that
        rank is 1 (exactly what R@1 counts)."""
        return {"rank": (self.ranks + 1).astype(np.int32), "hit1": self.ranks < 1}


def check_ties(ties: str) -> str:
    """`ties` itself if it is a known tie policy, else a ValueError naming it."""
    if ties not in TIE_POLICIES:
        raise ValueError(f"unknown tie policy {ties!r}; known: {', '.join(TIE_POLICIES)}")
    return ties


def pad_ground_truth(gt: Sequence[Sequence[int]]) -> np.ndarray:
    """Ragged ground-truth lists -> (n, max_len) int64 array padded with -1."""
    width = max(len(g) for g in gt)
    padded = np.full((len(gt), width), -1, dtype=np.int64)
    for row, items in enumerate(gt):
        if len(items) == 0:
            raise ValueError(f"query {row} has no ground-truth item")
        padded[row, : len(items)] = np.asarray(list(items), dtype=np.int64)
    return padded


def rows_by_owner(owner: Sequence[int] | np.ndarray, n_owners: int) -> list[list[int]]:
    """Ground truth from an owner column: for each owner 0..n_owners-1, its rows (ascending).

    E.g. the captions of each image from `caption_image`; an owner without rows gets [].
    """
    owners = np.asarray(owner, dtype=np.int64)
    if owners.size and (owners.min() < 0 or owners.max() >= n_owners):
        raise ValueError(
            f"owners must lie in 0..{n_owners - 1}, got {owners.min()}..{owners.max()}"
        )
    order = np.argsort(owners, kind="stable")
    bounds = np.searchsorted(owners[order], np.arange(n_owners + 1))
    return [order[bounds[i] : bounds[i + 1]].tolist() for i in range(n_owners)]


def ranks_from_scores(
    scores: np.ndarray, gt: np.ndarray, ties: str = "optimistic"
) -> tuple[np.ndarray, np.ndarray]:
    """Ranks and top-1 indices (int64) of one chunk of score rows (gt padded with -1)."""
    check_ties(ties)
    scores = np.asarray(scores)
    gt = np.asarray(gt, dtype=np.int64)
    rows = np.arange(scores.shape[0])
    valid = gt >= 0
    gt_scores = np.where(valid, np.take_along_axis(scores, np.maximum(gt, 0), axis=1), -np.inf)
    best_pos = gt_scores.argmax(axis=1)
    best_gt = gt_scores[rows, best_pos]
    best_gt_index = gt[rows, best_pos]
    top_index = scores.argmax(axis=1)  # first maximum -> lowest index among ties
    top_score = scores[rows, top_index]
    if ties == "optimistic":
        ranks = np.count_nonzero(scores > best_gt[:, None], axis=1).astype(np.int64)
        top1 = np.where(top_score > best_gt, top_index, best_gt_index)
        return ranks, top1.astype(np.int64)
    # pessimistic: non-ground-truth items at or above the best ground-truth score rank above it
    n_gallery = scores.shape[1]
    is_gt = np.zeros((scores.shape[0], n_gallery + 1), dtype=bool)
    is_gt[rows[:, None], np.where(valid, gt, n_gallery)] = True  # padding -> the extra column
    not_gt = ~is_gt[:, :n_gallery]
    ranks = np.count_nonzero((scores >= best_gt[:, None]) & not_gt, axis=1).astype(np.int64)
    tied = (scores == best_gt[:, None]) & not_gt
    first_tied = tied.argmax(axis=1)  # first maximum -> lowest tied index
    top1 = np.where(
        top_score > best_gt, top_index, np.where(tied.any(axis=1), first_tied, best_gt_index)
    )
    return ranks, top1.astype(np.int64)


def retrieval_ranks(
    queries: np.ndarray,
    gallery: np.ndarray,
    gt: Sequence[Sequence[int]] | np.ndarray,
    *,
    chunk_size: int = 1024,
    score_fn: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
    ties: str = "optimistic",
) -> RankResult:
    """Ranks of every query against the gallery; scores = queries @ gallery.T by default (in the
    embeddings' own dtype)."""
    check_ties(ties)
    q = np.asarray(queries)
    g = np.asarray(gallery)
    gt_array = gt if isinstance(gt, np.ndarray) else pad_ground_truth(gt)
    score_fn = score_fn or (lambda a, b: a @ b.T)
    ranks, top1 = [], []
    for start in range(0, q.shape[0], chunk_size):
        scores = score_fn(q[start : start + chunk_size], g)
        r, t = ranks_from_scores(scores, gt_array[start : start + chunk_size], ties)
        ranks.append(r)
        top1.append(t)
    empty = np.zeros(0, dtype=np.int64)
    return RankResult(
        ranks=np.concatenate(ranks) if ranks else empty,
        top1=np.concatenate(top1) if top1 else empty,
    )


def recall_at_k(ranks: np.ndarray, ks: Sequence[int] = DEFAULT_KS) -> dict[str, float]:
    """Recall@K in percent: share of queries whose rank is below K."""
    ranks = np.asarray(ranks)
    return {f"R@{k}": float(100.0 * np.mean(ranks < k)) for k in ks}


def false_recall_at_1(top1: np.ndarray, is_distractor: np.ndarray) -> float:
    """Percent of queries whose top-1 item is a distractor (altered caption, mixed image)."""
    return float(100.0 * np.mean(np.asarray(is_distractor)[np.asarray(top1)]))


def drop_rate(r1_original: float, r1_stressed: float) -> float | None:
    """Relative fall of R@1 in percent: 100 * (orig - stressed) / orig; None when orig is 0
    (undefined)."""
    if r1_original == 0:
        return None
    return float(100.0 * (r1_original - r1_stressed) / r1_original)


@dataclass(frozen=True)
class ImageTextRanks:
    """The ranks of both retrieval directions on the original captions, and their Recall@K."""

    i2t: RankResult  # one row per image query
    t2i: RankResult  # one row per caption query
    metrics: dict[str, float]  # i2t_R@K, t2i_R@K

    def item_columns(self) -> dict[str, np.ndarray]:
        """Per query, the image queries then the caption queries: `direction` ("i2t" / "t2i"),
        `rank` and `hit1` (RankResult.item_columns)."""
        i2t, t2i = self.i2t.item_columns(), self.t2i.item_columns()
        direction = np.array(["i2t"] * len(self.i2t.ranks) + ["t2i"] * len(self.t2i.ranks))
        return {"direction": direction, **{k: np.concatenate([i2t[k], t2i[k]]) for k in i2t}}


def image_text_ranks(
    image_emb: np.ndarray,
    text_emb: np.ndarray,
    caption_image: Sequence[int],
    ks: Sequence[int] = DEFAULT_KS,
    chunk_size: int = 1024,
    *,
    ties: str = "optimistic",
) -> ImageTextRanks:
    """Image-to-text and text-to-image ranks on the original captions, with their Recall@K."""
    caption_owner = np.asarray(caption_image)
    captions_of = rows_by_owner(caption_owner, len(image_emb))
    i2t = retrieval_ranks(image_emb, text_emb, captions_of, chunk_size=chunk_size, ties=ties)
    t2i = retrieval_ranks(
        text_emb, image_emb, [[int(i)] for i in caption_owner], chunk_size=chunk_size, ties=ties
    )
    out = {f"i2t_{k}": v for k, v in recall_at_k(i2t.ranks, ks).items()}
    out.update({f"t2i_{k}": v for k, v in recall_at_k(t2i.ranks, ks).items()})
    return ImageTextRanks(i2t=i2t, t2i=t2i, metrics=out)


def image_text_recalls(
    image_emb: np.ndarray,
    text_emb: np.ndarray,
    caption_image: Sequence[int],
    ks: Sequence[int] = DEFAULT_KS,
    chunk_size: int = 1024,
    *,
    ties: str = "optimistic",
) -> dict[str, float]:
    """Image-to-text and text-to-image Recall@K on the original captions."""
    return image_text_ranks(image_emb, text_emb, caption_image, ks, chunk_size, ties=ties).metrics


@dataclass(frozen=True)
class StressRanks:
    """The ranks of one stressed retrieval direction, and its metrics (see `stress_ranks`)."""

    stressed: RankResult  # gallery = originals + distractors
    original: RankResult  # gallery = originals only (same queries)
    n_original: int  # stressed gallery rows at or past it are distractors
    metrics: dict[str, float | None]

    @property
    def false_top1(self) -> np.ndarray:
        """Per query: its top-1 item in the stressed gallery is a distractor (what false R@1
        counts)."""
        return self.stressed.top1 >= self.n_original

    def item_columns(self) -> dict[str, np.ndarray]:
        """Per query: `rank` and `hit1` in the stressed gallery (what R@1 counts), `hit1_original`
        in the originals-only gallery (R@1_original) and `false_top1` (false R@1)."""
        return {
            **self.stressed.item_columns(),
            "hit1_original": self.original.ranks < 1,
            "false_top1": self.false_top1,
        }


def stress_ranks(
    queries: np.ndarray,
    originals: np.ndarray,
    gt: Sequence[Sequence[int]],
    distractors: np.ndarray,
    *,
    prefix: str,
    ks: Sequence[int] = DEFAULT_KS,
    chunk_size: int = 1024,
    ties: str = "optimistic",
) -> StressRanks:
    """Stress-test ranks and metrics of one retrieval direction (official RoCOCO semantics).

    Gallery = `originals` (rows 0..n-1) followed by `distractors` (rows n..n+m-1);
    `gt[q]` lists the ground-truth rows of query q, all among the originals. The
    distractors are never ground truth; their owner does not matter for the metrics.

        text stress (image -> text):
            stress_recalls(image_emb, caption_emb, captions_of_image, altered_emb, prefix="i2t")
            (distractors = altered captions; an image's ground truth = its original captions)
        image stress (text -> image):
            stress_recalls(text_emb, image_emb, [[owner] per caption], mixed_emb, prefix="t2i")
            (distractors = mixed images; a caption's only ground truth = its original image)

    Returns the ranks of both galleries and the metrics computed from them (see the module
    docstring for the tie policy):

        {prefix}_R@K            Recall@K against the originals + distractors gallery (percent)
        {prefix}_R@1_original   Recall@1 against the originals-only gallery (same queries)
        {prefix}_false_R@1      percent of queries whose top-1 item is a distractor (any
                                distractor; official eval_clip_t2i.py: `inds[0] >= 5000`)
        {prefix}_drop_rate      100 * (R@1_original - R@1) / R@1_original; None when
                                R@1_original is 0 (undefined)

    Top-1 and ties, optimistic (the default): the top-1 item is the best ground truth
    unless some item scores strictly above it; among items tied at the top score the
    lowest gallery row wins. Originals come before distractors, so a query counts as
    "false top-1" exactly when its best distractor scores strictly above every original
    of the gallery (its own and other queries'); a tie between a distractor and the
    ground truth counts as a hit, never as false. Pessimistic: a tie between the best
    ground truth and any other item counts as a miss; the top-1 is then the lowest tied
    row, so it is "false" exactly when no other original ties too.
    """
    check_ties(ties)
    originals = np.asarray(originals)
    distractors = np.asarray(distractors)
    if originals.ndim != 2 or distractors.ndim != 2 or distractors.shape[1] != originals.shape[1]:
        raise ValueError(
            f"distractor embeddings {distractors.shape} do not match the originals "
            f"{originals.shape}"
        )
    if len(gt) != len(queries):
        raise ValueError(f"{len(queries)} queries but {len(gt)} ground-truth lists")
    n_original = len(originals)
    for row, items in enumerate(gt):
        if any(not 0 <= int(i) < n_original for i in items):
            raise ValueError(
                f"query {row}: ground truth {list(items)} outside the {n_original} originals"
            )
    gallery = np.concatenate([originals, distractors], axis=0)
    stressed = retrieval_ranks(queries, gallery, gt, chunk_size=chunk_size, ties=ties)
    original = retrieval_ranks(queries, originals, gt, chunk_size=chunk_size, ties=ties)
    out: dict[str, float | None] = {
        f"{prefix}_{k}": v for k, v in recall_at_k(stressed.ranks, ks).items()
    }
    r1 = recall_at_k(stressed.ranks, [1])["R@1"]
    r1_original = recall_at_k(original.ranks, [1])["R@1"]
    is_distractor = np.arange(len(gallery)) >= n_original
    out[f"{prefix}_R@1_original"] = r1_original
    out[f"{prefix}_false_R@1"] = false_recall_at_1(stressed.top1, is_distractor)
    out[f"{prefix}_drop_rate"] = drop_rate(r1_original, r1)
    return StressRanks(stressed=stressed, original=original, n_original=n_original, metrics=out)


def stress_recalls(
    queries: np.ndarray,
    originals: np.ndarray,
    gt: Sequence[Sequence[int]],
    distractors: np.ndarray,
    *,
    prefix: str,
    ks: Sequence[int] = DEFAULT_KS,
    chunk_size: int = 1024,
    ties: str = "optimistic",
) -> dict[str, float | None]:
    """Stress-test metrics of one retrieval direction: `stress_ranks(...).metrics`."""
    return stress_ranks(
        queries,
        originals,
        gt,
        distractors,
        prefix=prefix,
        ks=ks,
        chunk_size=chunk_size,
        ties=ties,
    ).metrics
