"""ImageNet-P's stability metrics (Hendrycks & Dietterich 2019), as `ImageNet-P/test.py` of
hendrycks/robustness computes them (commit 8190fe3, lines 215-273).

Flip probability (FP): per sequence, the share of frame pairs whose top-1 predictions differ,
then the mean over sequences. Top-5 distance (T5D): the same pairs and averaging, with
d = sum_{i=1..5} |i - min(sigma(i), 6)|, sigma(i) = the rank in the second frame of the class
ranked i-th in the first (0 when the top-5 list is unchanged, in order).

Pairs. Noise sequences are not temporal (each frame is a fresh draw of noise on the clean image):
every frame j >= 1 is compared with frame 0, the clean image. Motion sequences (blur, weather,
geometry) compare consecutive frames; at difficulty d the sequence is read with stride d, and each
of the d strided subsequences (offsets 0..d-1) adds its consecutive pairs. Pure NumPy: the
evaluation step imports no model library.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vlstress.errors import VlstressError


def _check(sequences: Sequence[np.ndarray], difficulty: int, noise: bool) -> None:
    if difficulty < 1:
        raise VlstressError(f"difficulty must be >= 1, got {difficulty}")
    if not sequences:
        raise VlstressError("no sequences to score")
    step = 1 if noise else difficulty
    for index, frames in enumerate(sequences):
        if len(frames) < step + 1:
            raise VlstressError(
                f"sequence {index} has {len(frames)} frame(s): FP and T5D need at least "
                f"{step + 1} (two frames at stride {step})"
            )


def _pairs(n_frames: int, difficulty: int, noise: bool) -> list[tuple[int, int]]:
    """(first, second) frame indices compared, in the reference's order."""
    if noise:
        return [(0, j) for j in range(1, n_frames)]
    pairs = []
    for offset in range(difficulty):
        frames = list(range(offset, n_frames, difficulty))
        pairs += list(zip(frames, frames[1:]))
    return pairs


def flip_shares(
    predictions: Sequence[Sequence[int]], *, noise: bool, difficulty: int = 1
) -> np.ndarray:
    """Per sequence, the share of its frame pairs whose top-1 predictions differ (float64)."""
    sequences = [np.asarray(p) for p in predictions]
    _check(sequences, difficulty, noise)
    return np.array(
        [np.mean([p[a] != p[b] for a, b in _pairs(len(p), difficulty, noise)]) for p in sequences],
        dtype=np.float64,
    )


def flip_probability(
    predictions: Sequence[Sequence[int]], *, noise: bool, difficulty: int = 1
) -> float:
    """FP over sequences of top-1 predictions (one array of class indices per sequence): the mean
    of `flip_shares`."""
    return float(np.mean(flip_shares(predictions, noise=noise, difficulty=difficulty)))


def ranks(logits: np.ndarray) -> np.ndarray:
    """Rank of every class per row (1 = top); ties broken by class order, as scipy's
    rankdata(-x, method='ordinal')."""
    order = np.argsort(-np.asarray(logits), axis=-1, kind="stable")
    out = np.empty_like(order)
    np.put_along_axis(out, order, np.arange(1, order.shape[-1] + 1), axis=-1)
    return out


def top5_distance(first_ranks: np.ndarray, second_ranks: np.ndarray) -> int:
    """d between two frames' class ranks (1 = top): the reference's
    `dist(perm2[argsort(perm1)])`."""
    sigma = np.asarray(second_ranks)[np.argsort(first_ranks)][:5]
    return int(np.abs(np.arange(1, 6) - np.minimum(sigma, 6)).sum())


def top5_distances(
    rank_sequences: Sequence[np.ndarray], *, noise: bool, difficulty: int = 1
) -> np.ndarray:
    """Per sequence, the mean top-5 distance of its frame pairs (float64)."""
    sequences = [np.asarray(r) for r in rank_sequences]
    _check(sequences, difficulty, noise)
    if any(r.ndim != 2 or r.shape[1] < 5 for r in sequences):
        raise VlstressError("top-5 distance needs ranks of at least 5 classes per frame")
    return np.array(
        [
            np.mean([top5_distance(r[a], r[b]) for a, b in _pairs(len(r), difficulty, noise)])
            for r in sequences
        ],
        dtype=np.float64,
    )


def mean_top5_distance(
    rank_sequences: Sequence[np.ndarray], *, noise: bool, difficulty: int = 1
) -> float:
    """T5D over sequences of per-frame class ranks (frames x classes, 1 = top): the mean of
    `top5_distances`."""
    return float(np.mean(top5_distances(rank_sequences, noise=noise, difficulty=difficulty)))


def relative(
    values: dict[str, float], baseline: dict[str, float]
) -> tuple[float | None, list[str]]:
    """The ImageNet-P normalisation: mean over perturbations of value / baseline's value (mFR from
    FP, relative mT5D from T5D), over the perturbations both have; and the perturbations left out
    because the baseline's value is 0 (a ratio to 0 is undefined). None when none is left."""
    shared = [name for name in values if name in baseline]
    zero = [name for name in shared if baseline[name] == 0]
    kept = [name for name in shared if baseline[name] != 0]
    if not kept:
        return None, zero
    return float(np.mean([values[name] / baseline[name] for name in kept])), zero
