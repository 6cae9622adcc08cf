"""Calibration metrics and temperature scaling: known answers, agreement with torchmetrics and
torch."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from vlstress.errors import VlstressError
from vlstress.suites.calibration import calibration as cal
from vlstress.suites.calibration.bounds import at_bound


def two_class_logits(confidences: list[float], predicted: list[int]) -> np.ndarray:
    """Logits whose softmax gives `confidence` to class `predicted` of two classes."""
    rows = []
    for conf, cls in zip(confidences, predicted):
        gap = math.log(conf / (1 - conf))
        rows.append([gap, 0.0] if cls == 0 else [0.0, gap])
    return np.array(rows)


def test_ece_known_answer():
    # confidences 0.9, 0.9 (one right, one wrong) and 0.6, 0.6 (both right):
    # bin of 0.9: |0.5 - 0.9| x 2/4; bin of 0.6: |1.0 - 0.6| x 2/4 -> 0.2 + 0.2
    logits = two_class_logits([0.9, 0.9, 0.6, 0.6], [0, 0, 1, 1])
    labels = np.array([0, 1, 1, 1])
    assert cal.ece(logits, labels) == pytest.approx(0.4, abs=1e-6)
    assert cal.reliability_bins(logits, labels).ece == pytest.approx(0.4, abs=1e-6)


@pytest.mark.parametrize("n_bins", [5, 15, 20])
def test_reliability_bins_agree_with_torchmetrics(n_bins):
    from vlstress.suites.zeroshot.metrics import softmax

    rng = np.random.default_rng(n_bins)
    logits = rng.normal(0, 3, size=(500, 7))
    labels = rng.integers(0, 7, size=500)
    bins = cal.reliability_bins(logits, labels, n_bins)
    assert bins.counts.sum() == 500
    assert bins.ece == pytest.approx(cal.ece(logits, labels, n_bins), abs=1e-6)
    probs = softmax(logits)
    assert bins.ece == pytest.approx(torchmetrics_ece(probs, labels, n_bins), abs=1e-6)
    filled = bins.counts > 0
    assert np.all(
        (bins.confidence[filled] >= bins.edges[:-1][filled] - 1e-7)
        & (bins.confidence[filled] <= bins.edges[1:][filled] + 1e-7)
    )


# torch sums float32 in 8-lane vectors on its AVX2 kernels (the cap of vlstress.cpu_kernels);
# elsewhere (AVX-512 uncapped, ARM) in another order: there the ECEs agree up to float32 rounding.
TORCH_AVX2 = torch.backends.cpu.get_cpu_capability() == "AVX2"


def same_as_torch(value: float, expected: float) -> bool:
    return value == expected if TORCH_AVX2 else value == pytest.approx(expected, rel=1e-6)


def torchmetrics_ece(probs: np.ndarray, labels: np.ndarray, n_bins: int) -> float:
    """The reference: torchmetrics' multiclass ECE (l1) of probabilities (test-only)."""
    from torchmetrics.functional.classification import multiclass_calibration_error

    return float(
        multiclass_calibration_error(
            torch.from_numpy(probs),
            torch.from_numpy(labels),
            num_classes=probs.shape[1],
            n_bins=n_bins,
            norm="l1",
        )
    )


def test_ece_equals_torchmetrics_bit_for_bit():
    """The NumPy ECE is torchmetrics' to the bit: its float32 edges, bins and sums, in its order
    (many bin counts, set sizes, class counts, peaked and flat softmaxes, a confidence of 1)."""
    from vlstress.suites.zeroshot.metrics import softmax

    rng = np.random.default_rng(0)
    for n_bins in (1, 2, 5, 7, 8, 10, 15, 20, 31, 64, 100):
        for _ in range(6):
            n, classes = int(rng.integers(1, 1500)), int(rng.integers(2, 40))
            logits = rng.normal(0, rng.uniform(0.1, 40), size=(n, classes))
            labels = rng.integers(0, classes, size=n)
            probs = softmax(logits)
            expected = torchmetrics_ece(probs, labels, n_bins)
            assert same_as_torch(cal.calibration_error(probs, labels, n_bins), expected), (
                n_bins,
                n,
                classes,
            )
            assert same_as_torch(cal.ece(logits, labels, n_bins), expected)
    certain = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    labels = np.array([0, 0, 1])
    assert same_as_torch(
        cal.calibration_error(certain, labels, 15), torchmetrics_ece(certain, labels, 15)
    )


def test_edges_and_sums_are_torch_bit_for_bit():
    for n_bins in range(1, 600):
        expected = torch.linspace(0, 1, n_bins + 1, dtype=torch.float32).numpy()
        assert np.array_equal(cal.torch_linspace_edges(n_bins), expected), n_bins
    rng = np.random.default_rng(1)
    for n in [*range(1, 70), 127, 128, 129, 255, 256, 300, 511]:
        values = (rng.random(n) * rng.random(n) ** 3).astype(np.float32)
        values[rng.random(n) < 0.3] = 0.0
        assert same_as_torch(cal.torch_float32_sum(values), torch.from_numpy(values).sum().item())


def test_nll_and_brier_known_answers_and_torch():
    uniform = np.zeros((3, 2))
    labels = np.array([0, 1, 0])
    assert cal.nll(uniform, labels) == pytest.approx(math.log(2))
    assert cal.brier(uniform, labels) == pytest.approx(0.5)  # (0.5 - 1)^2 + 0.5^2
    certain = np.array([[50.0, 0.0]])
    assert cal.brier(certain, np.array([0])) == pytest.approx(0.0, abs=1e-12)
    assert cal.brier(certain, np.array([1])) == pytest.approx(2.0, abs=1e-12)
    rng = np.random.default_rng(0)
    logits = rng.normal(0, 2, size=(64, 5))
    labels = rng.integers(0, 5, size=64)
    expected = torch.nn.functional.cross_entropy(
        torch.from_numpy(logits), torch.from_numpy(labels)
    ).item()
    assert cal.nll(logits, labels) == pytest.approx(expected, rel=1e-9)


def test_temperature_recovers_the_true_temperature():
    rng = np.random.default_rng(1)
    logits = rng.normal(0, 4, size=(20000, 5))
    probs = cal.softmax(logits / 2.5)
    labels = np.array([rng.choice(5, p=p) for p in probs])
    assert cal.fit_temperature(logits, labels) == pytest.approx(2.5, rel=0.05)


def test_temperature_scaling_never_raises_the_fitted_nll():
    rng = np.random.default_rng(2)
    logits = rng.normal(0, 1, size=(300, 4)) * 10
    labels = rng.integers(0, 4, size=300)
    t = cal.fit_temperature(logits, labels)
    assert cal.nll(logits / t, labels) <= cal.nll(logits, labels) + 1e-12
    metrics = cal.calibration_metrics(logits, labels, t)
    assert metrics["temperature"] == t and metrics["nll_ts"] <= metrics["nll"] + 1e-12
    assert metrics["top1"] == pytest.approx(100 * np.mean(logits.argmax(1) == labels))
    # over-confident random logits: scaling lowers the confidence
    assert t > 1 and metrics["confidence_ts"] < metrics["confidence"]


def test_held_out_split_is_seeded_disjoint_and_complete():
    fit, held = cal.held_out_split(11, 0.5, seed=3)
    again = cal.held_out_split(11, 0.5, seed=3)
    assert np.array_equal(fit, again[0]) and np.array_equal(held, again[1])
    assert sorted([*fit, *held]) == list(range(11)) and len(fit) == 6
    other = cal.held_out_split(11, 0.5, seed=4)
    assert not np.array_equal(fit, other[0])
    with pytest.raises(VlstressError, match="at least 2"):
        cal.held_out_split(1, 0.5, 0)


def test_bad_input_is_named():
    with pytest.raises(VlstressError, match="labels outside"):
        cal.nll(np.zeros((2, 3)), np.array([0, 3]))
    with pytest.raises(VlstressError, match="no images"):
        cal.ece(np.zeros((0, 3)), np.array([], dtype=int))


def test_a_fit_without_interior_optimum_lands_on_the_bound_and_says_so():
    logits = np.array([[5.0, 0.0], [0.0, 5.0], [4.0, 1.0]])
    labels = np.array([1, 0, 1])  # every image wrong: the NLL falls as T grows
    t = cal.fit_temperature(logits, labels)
    assert t == pytest.approx(100.0, rel=1e-3) and at_bound(t)
    assert not at_bound(cal.fit_temperature(logits, np.array([0, 1, 1])))


def test_a_temperature_on_the_bound_is_marked_in_the_table(tmp_path):
    """The fit at its search bound is flagged in the table and its caption, not only in a log."""
    from vlstress.record import write_record
    from vlstress.report import records
    from vlstress.suites.calibration import table as calibration_table

    from report_fixtures import record

    paths = []
    for model, temperature in (("vit-b-32-random", 100.0), ("rn50-openai", 1.7)):
        rec = record(
            model,
            "calibration",
            {"set": "objects", "split": "held-out"},
            {"top1": 50.0, "ece": 10.0, "ece_ts": 8.0, "temperature": temperature},
        )
        paths.append(tmp_path / f"{model}.json")
        write_record(paths[-1], rec)
    markdown, latex, notes = calibration_table.render(records.collect(paths), {})
    frame = calibration_table.calibration_table(records.aggregate(records.collect(paths)))
    cells = frame["T"].droplevel("set").to_dict()
    assert cells == {"ViT-B-32 (random-init)": "100.000†", "RN50 (openai)": "1.700"}
    assert "† T on the search bound [0.01, 100]" in markdown and "100.000†" in markdown
    assert "search bound" in latex
