"""Nearest training images by cosine similarity (faiss inner product on L2-normalised embeddings),
and the near-duplicate threshold calibrated on planted duplicates.

Index: `flat` (IndexFlatIP, exact), `ivf` (IndexIVFFlat with `nlist` lists trained on the
collection, `nprobe` searched: approximate, for collections of millions), `auto` = flat up to
AUTO_FLAT_MAX images. faiss runs on the CPU here (faiss-cpu); its threads follow OMP_NUM_THREADS.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from vlstress.errors import VlstressError

AUTO_FLAT_MAX = 100_000


@dataclass(frozen=True)
class Calibration:
    threshold: float
    recall: float  # of the planted duplicates at the threshold
    found: float  # share of planted duplicates whose nearest neighbour is their original
    n_planted: int
    per_transform: dict[str, float]  # recall at the threshold, per transform


def build_index(train: np.ndarray, kind: str, *, nlist: int, nprobe: int, seed: int):
    import faiss

    train = np.ascontiguousarray(train, dtype=np.float32)
    if train.ndim != 2 or len(train) == 0:
        raise VlstressError("the training collection has no embeddings to index")
    if kind == "auto":
        kind = "flat" if len(train) <= AUTO_FLAT_MAX else "ivf"
    dim = train.shape[1]
    index: Any
    if kind == "flat":
        index = faiss.IndexFlatIP(dim)
    elif kind == "ivf":
        lists = min(nlist, len(train))
        index = faiss.IndexIVFFlat(faiss.IndexFlatIP(dim), dim, lists, faiss.METRIC_INNER_PRODUCT)
        index.cp.seed = seed  # k-means initialisation: seeded, so reruns build the same lists
        index.train(train)
        index.nprobe = min(nprobe, lists)
    else:
        raise VlstressError(f"unknown faiss index {kind!r}: auto, flat or ivf")
    index.add(train)
    return index, kind


def nearest(index, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(similarity, training row) of each query's nearest training image."""
    if len(queries) == 0:
        return np.zeros(0, np.float32), np.zeros(0, np.int64)
    sims, rows = index.search(np.ascontiguousarray(queries, dtype=np.float32), 1)
    return sims[:, 0], rows[:, 0]


def calibrate(
    similarity: np.ndarray,
    neighbour: np.ndarray,
    original: np.ndarray,
    transforms: list[str],
    recall: float,
) -> Calibration:
    """The threshold that keeps `recall` of the planted duplicates: the (1 - recall) quantile of
    their similarities to their nearest neighbour when that is their original (a planted copy
    whose nearest image is another is missed at any threshold)."""
    if len(similarity) == 0:
        raise VlstressError("no planted duplicates to calibrate the threshold on")
    hit = neighbour == original
    scores = np.where(hit, similarity, -np.inf)
    ordered = np.sort(scores)[::-1]
    needed = int(np.ceil(recall * len(scores)))
    threshold = float(ordered[needed - 1])
    if not np.isfinite(threshold):
        raise VlstressError(
            f"only {hit.sum()} of {len(hit)} planted duplicates have their original as nearest "
            f"neighbour: no threshold keeps {recall:.0%} of them (a detector this weak cannot "
            "find near-duplicates; give `overlap.threshold` or another detector)"
        )
    kept = scores >= threshold
    names = sorted(set(transforms))
    per = {t: float(np.mean([k for k, name in zip(kept, transforms) if name == t])) for t in names}
    return Calibration(threshold, float(kept.mean()), float(hit.mean()), len(scores), per)
