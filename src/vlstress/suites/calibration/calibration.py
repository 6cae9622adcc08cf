"""Calibration of the zero-shot softmax: ECE, NLL, Brier score, reliability bins, temperature
scaling.

The zero-shot logits of a model are `logit_scale * cos(image, class weight)`, the scale being
the model's own learned `logit_scale.exp()` (100 for trained CLIP models, 1/0.07 at init).
Temperature scaling (Guo et al., 2017) divides the logits by one scalar T fitted by
minimising the NLL on one split of the in-distribution set (the fit split) and evaluated on the
other, held-out split; the holistic CLIP study applies that T unchanged to shifted sets to see
whether calibration transfers.

ECE uses 15 equal-width confidence bins and is computed as `torchmetrics` computes it
(`MulticlassCalibrationError`, norm l1), in NumPy (`calibration_error`: the step imports no
torch); the reliability bins drawn in the diagrams are computed here with the same binning, and
tests check that both ECEs equal torchmetrics'.
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
    """Expected calibration error of the softmax of `logits` (equal-width bins, l1), as a fraction
    in [0, 1]: `calibration_error` of the probabilities."""
    logits, labels = _check(logits, labels)
    return calibration_error(softmax(logits), labels, n_bins)


def torch_linspace_edges(n_bins: int) -> np.ndarray:
    """The n_bins + 1 float32 edges of `torch.linspace(0, 1, n_bins + 1)`: torch's CPU formula,
    step * i for the first half and 1 - step * (n_bins - i) for the second, with a float32 step
    and one rounding (a fused multiply-add; exact in float64, then rounded to float32). Tests
    check them bit for bit."""
    steps = n_bins + 1
    step = float(np.float32(1.0) / np.float32(n_bins))
    index = np.arange(steps)
    edges = np.where(index < steps // 2, step * index, 1.0 - step * (steps - 1 - index))
    return edges.astype(np.float32)


TORCH_LANES = 8  # float32 lanes of ATen's vectors under the AVX2 cap (vlstress.cpu_kernels)


def _accumulate(items: list, ilp: int = 4):
    """ATen's `row_sum`: `ilp` running sums over the items in turn, the leftover items into the
    first, then the sums added in order (float32 throughout; items are scalars or lane
    vectors)."""
    sums = [np.zeros_like(items[0]) for _ in range(ilp)]
    full = len(items) // ilp * ilp
    for i in range(full):
        sums[i % ilp] = (sums[i % ilp] + items[i]).astype(np.float32)
    for item in items[full:]:
        sums[0] = (sums[0] + item).astype(np.float32)
    for other in sums[1:]:
        sums[0] = (sums[0] + other).astype(np.float32)
    return sums[0]


def torch_float32_sum(values: np.ndarray) -> float:
    """`torch.sum` of a short float32 vector on the CPU, in torch's order (ATen's cascade sum:
    8-lane vectors in 4 running sums, then the tail values, then the lanes, one by one), so
    that an ECE equals torchmetrics' to the bit. Past 511 values ATen adds levels of partial
    sums: there NumPy's float32 sum (equal up to float32 rounding)."""
    values = np.asarray(values, dtype=np.float32)
    n = len(values)
    if n == 0 or n >= 512:
        return float(np.sum(values, dtype=np.float32))
    if n < TORCH_LANES:
        return float(_accumulate(list(values)))
    whole = n // TORCH_LANES * TORCH_LANES
    lanes = _accumulate(list(values[:whole].reshape(-1, TORCH_LANES)))
    total = np.float32(0.0)
    for value in (*values[whole:], *lanes):
        total = np.float32(total + value)
    return float(total)


def calibration_error(probs: np.ndarray, labels: np.ndarray, n_bins: int = N_BINS) -> float:
    """Expected calibration error (equal-width bins, l1) of class probabilities, as a fraction in
    [0, 1], computed as torchmetrics' `multiclass_calibration_error(probs, labels, n_bins,
    norm="l1")` computes it, in NumPy: float32 top-1 confidences, each in bin i with
    edges[i] <= c < edges[i + 1] (`torch.bucketize(c, edges, right=True) - 1`; a confidence of
    exactly 1 gets a bin of its own), float32 sums per bin in sample order, and the final sum in
    torch's order. Tests check the two agree bit for bit (torchmetrics is a test-only reference:
    no step imports torch for a metric)."""
    probs = np.asarray(probs)
    labels = np.asarray(labels, dtype=np.int64)
    confidence = probs.max(axis=1).astype(np.float32)
    correct = (probs.argmax(axis=1) == labels).astype(np.float32)
    index = np.searchsorted(torch_linspace_edges(n_bins), confidence, side="right") - 1
    count = np.zeros(n_bins + 1, dtype=np.float32)
    conf_sum = np.zeros(n_bins + 1, dtype=np.float32)
    acc_sum = np.zeros(n_bins + 1, dtype=np.float32)
    np.add.at(count, index, np.float32(1.0))
    np.add.at(conf_sum, index, confidence)
    np.add.at(acc_sum, index, correct)
    with np.errstate(invalid="ignore", divide="ignore"):
        conf_bin = np.nan_to_num(conf_sum / count)
        acc_bin = np.nan_to_num(acc_sum / count)
    prop_bin = count / torch_float32_sum(count)
    return torch_float32_sum(np.abs(acc_bin - conf_bin) * prop_bin)


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
