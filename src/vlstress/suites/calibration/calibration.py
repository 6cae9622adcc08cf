"""Calibration of the zero-shot softmax: ECE, NLL, Brier score, reliability bins, temperature
scaling.

The zero-shot logits of a model are `logit_scale * cos(image, class weight)`, the scale being
the model's own learned `logit_scale.exp()` (100 for trained CLIP models, 1/0.07 at init).
Temperature scaling (Guo et al., 2017) divides the logits by one scalar T fitted by
minimising the NLL on a held-out split of the in-distribution set; the holistic CLIP study
applies that T unchanged to shifted sets to see whether calibration transfers.

ECE uses 15 equal-width confidence bins and is computed by `torchmetrics`
(`MulticlassCalibrationError`, norm l1); the reliability bins drawn in the diagrams are
computed here with the same binning, and a test checks that their ECE equals torchmetrics'.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vlstress.errors import VlstressError
from vlstress.suites.calibration.bounds import LOG_T_MAX, LOG_T_MIN
from vlstress.suites.zeroshot.metrics import softmax

N_BINS = 15


def log_softmax(logits: np.ndarray) -> np.ndarray:
    logits = np.asarray(logits, dtype=np.float64)
    shifted = logits - logits.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def _check(logits: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    logits = np.asarray(logits, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.int64)
    if logits.ndim != 2 or logits.shape[0] != labels.shape[0]:
        raise VlstressError(f"logits of shape {logits.shape} for {labels.shape[0]} labels")
    if logits.shape[0] == 0:
        raise VlstressError("no images to score")
    if labels.min() < 0 or labels.max() >= logits.shape[1]:
        raise VlstressError(f"labels outside 0..{logits.shape[1] - 1}")
    return logits, labels


def nll(logits: np.ndarray, labels: np.ndarray) -> float:
    """Mean negative log-likelihood of the true class (nats)."""
    logits, labels = _check(logits, labels)
    return float(-log_softmax(logits)[np.arange(len(labels)), labels].mean())


def brier(logits: np.ndarray, labels: np.ndarray) -> float:
    """Multi-class Brier score: mean over images of sum_k (p_k - 1[k = y])^2 (0 best, 2 worst)."""
    logits, labels = _check(logits, labels)
    probs = softmax(logits)
    probs[np.arange(len(labels)), labels] -= 1.0
    return float((probs**2).sum(axis=1).mean())


def ece(logits: np.ndarray, labels: np.ndarray, n_bins: int = N_BINS) -> float:
    """Expected calibration error (equal-width bins, l1) by torchmetrics, as a fraction in
    [0, 1]."""
    import torch
    from torchmetrics.functional.classification import multiclass_calibration_error

    logits, labels = _check(logits, labels)
    value = multiclass_calibration_error(
        torch.from_numpy(softmax(logits)),
        torch.from_numpy(labels),
        num_classes=logits.shape[1],
        n_bins=n_bins,
        norm="l1",
    )
    return float(value)


@dataclass(frozen=True)
class ReliabilityBins:
    """Per confidence bin: number of images, mean confidence and accuracy (NaN in empty bins)."""

    edges: np.ndarray  # n_bins + 1
    counts: np.ndarray
    confidence: np.ndarray
    accuracy: np.ndarray

    @property
    def ece(self) -> float:
        filled = self.counts > 0
        weights = self.counts[filled] / self.counts.sum()
        return float((weights * np.abs(self.accuracy[filled] - self.confidence[filled])).sum())

    def to_dict(self) -> dict:
        def clean(values):
            return [None if np.isnan(v) else float(v) for v in values]

        return {
            "edges": self.edges.tolist(),
            "counts": self.counts.astype(int).tolist(),
            "confidence": clean(self.confidence),
            "accuracy": clean(self.accuracy),
        }


def reliability_bins(
    logits: np.ndarray, labels: np.ndarray, n_bins: int = N_BINS
) -> ReliabilityBins:
    """Equal-width bins of the top-1 confidence, binned as torchmetrics bins them.

    torchmetrics takes float32 confidences and puts each in bin i with edges[i] <= c < edges[i + 1]
    (`torch.bucketize(c, edges, right=True) - 1`); a confidence of exactly 1 lands in the last bin
    here.
    """
    logits, labels = _check(logits, labels)
    probs = softmax(logits)
    return bins_of(probs.max(axis=1), probs.argmax(axis=1) == labels, n_bins)


def bins_of(confidence: np.ndarray, correct: np.ndarray, n_bins: int = N_BINS) -> ReliabilityBins:
    """Reliability bins of top-1 confidences and correctness (pooled over sets with different
    classes, too)."""
    confidence = np.asarray(confidence, dtype=np.float64).astype(np.float32).astype(np.float64)
    correct = np.asarray(correct, dtype=np.float64)
    edges = np.linspace(0.0, 1.0, n_bins + 1, dtype=np.float32).astype(np.float64)
    index = np.clip(np.searchsorted(edges, confidence, side="right") - 1, 0, n_bins - 1)
    counts = np.bincount(index, minlength=n_bins).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_conf = np.bincount(index, weights=confidence, minlength=n_bins) / counts
        mean_acc = np.bincount(index, weights=correct, minlength=n_bins) / counts
    return ReliabilityBins(edges, counts, mean_conf, mean_acc)


def fit_temperature(logits: np.ndarray, labels: np.ndarray) -> float:
    """The T > 0 minimising NLL(logits / T) (bounded 1-D search over log T; the NLL is convex in
    1/T)."""
    from scipy.optimize import minimize_scalar

    logits, labels = _check(logits, labels)
    result = minimize_scalar(
        lambda log_t: nll(logits / np.exp(log_t), labels),
        bounds=(LOG_T_MIN, LOG_T_MAX),
        method="bounded",
        options={"xatol": 1e-6},
    )
    return float(np.exp(result.x))


def calibration_metrics(
    logits: np.ndarray, labels: np.ndarray, temperature: float, n_bins: int = N_BINS
) -> dict[str, float]:
    """Top-1, mean confidence, ECE (%), NLL and Brier, raw and after dividing the logits by
    `temperature` (`_ts`)."""
    logits, labels = _check(logits, labels)
    out: dict[str, float] = {"top1": 100.0 * float(np.mean(logits.argmax(axis=1) == labels))}
    for suffix, scaled in (("", logits), ("_ts", logits / temperature)):
        out[f"confidence{suffix}"] = 100.0 * float(softmax(scaled).max(axis=1).mean())
        out[f"ece{suffix}"] = 100.0 * ece(scaled, labels, n_bins)
        out[f"nll{suffix}"] = nll(scaled, labels)
        out[f"brier{suffix}"] = brier(scaled, labels)
    out["temperature"] = float(temperature)
    return out


def held_out_split(n: int, fit_fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(fit rows, evaluation rows): a seeded random split of range(n), both sorted and non-empty."""
    if n < 2:
        raise VlstressError(
            "temperature scaling needs at least 2 in-distribution images (a fit and an "
            f"evaluation split), got {n}"
        )
    if not 0.0 < fit_fraction < 1.0:
        raise VlstressError(f"calibration fit fraction must be in (0, 1), got {fit_fraction}")
    n_fit = min(n - 1, max(1, int(round(fit_fraction * n))))
    order = np.random.default_rng(seed).permutation(n)
    return np.sort(order[:n_fit]), np.sort(order[n_fit:])
