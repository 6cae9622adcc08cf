"""Nearest training images by cosine similarity (faiss inner product on L2-normalised embeddings),
and the near-duplicate threshold calibrated on planted duplicates.

Index: `flat` (IndexFlatIP, exact), `ivf` (IndexIVFFlat with `nlist` lists trained on the
collection, `nprobe` searched: approximate, for collections of millions), `auto` = flat up to
AUTO_FLAT_MAX images. faiss runs on the CPU here (faiss-cpu); its threads follow OMP_NUM_THREADS.

The same numbers on every CPU: faiss picks its kernels by the CPU (an AVX-512 build where the CPU
has it, BLAS for a batch of queries), and float32 sums in another order differ in the last bits
(one demo cosine read 0.969258 on one machine, 0.969257 on another). So faiss only proposes the
CANDIDATES best rows of each query; their cosines are recomputed exactly (`cosine`: each product of
two float32 numbers is exact in float64 and `math.fsum` rounds their sum once), a function of the
embeddings' bits alone, and the nearest is the best of them (ties: the lower row). What is written
and compared with the threshold is that cosine rounded to DECIMALS places: the embeddings are
float32 (about 7 significant digits, and the detector's other kernels, e.g. on a GPU, move them by
about 1e-6), so the sixth decimal of a cosine is not a property of the images; the flag is the
written similarity against the written threshold, so a reader can check it from the file.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from vlstress.errors import VlstressError

AUTO_FLAT_MAX = 100_000
CANDIDATES = 4  # rows faiss proposes per query, re-ranked by their exact cosines
DECIMALS = 5  # of a written cosine (and of the threshold): float32 embeddings carry no more


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


def nearest(index, queries: np.ndarray, train: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(similarity, training row) of each query's nearest training image: the best of faiss's
    CANDIDATES by their exact cosines (ties: the lower row), the similarity rounded to DECIMALS."""
    if len(queries) == 0:
        return np.zeros(0, np.float64), np.zeros(0, np.int64)
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    _, rows = index.search(queries, min(CANDIDATES, index.ntotal))
    sims, best = np.empty(len(queries), np.float64), np.empty(len(queries), np.int64)
    for i, candidates in enumerate(rows):
        found = [(cosine(queries[i], train[r]), int(r)) for r in candidates if r >= 0]
        if not found:  # an IVF probe that found no list holding a row
            raise VlstressError(
                f"the index found no training image for query {i}: raise overlap.nprobe"
            )
        sim, best[i] = max(found, key=lambda pair: (pair[0], -pair[1]))
        sims[i] = rounded(sim)
    return sims, best


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """The inner product of two float32 vectors, correctly rounded to float64 on any CPU: their
    products are exact in float64 (24 + 24 significant bits), `math.fsum` adds them exactly."""
    return math.fsum((np.asarray(a, np.float64) * np.asarray(b, np.float64)).tolist())


def rounded(value: float) -> float:
    """A cosine as it is written and compared: DECIMALS places."""
    return round(float(value), DECIMALS)


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
