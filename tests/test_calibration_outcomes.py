"""The per-image outcomes of `vlstress calibrate`: each record's block holds the images its ECEs are
computed on (the held-out split of the in-distribution set, every image of a shifted set), the
suite's headline statistics recompute the records' ECEs from it, the command writes it beside
the records, and a BCa bootstrap of it brackets the record. Hand-made embeddings (the `project`
of the command tests); no model runs."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import bootstrap
from test_holistic_commands import (  # noqa: F401  (project: the calibrate fixture)
    EVALUATIONS,
    call,
    project,
)

from vlstress.outcomes import outcomes_path, read_outcomes
from vlstress.record import read_records
from vlstress.suites.calibration import calibration as cal
from vlstress.suites.calibration.resampling import ece_resampling, image_outcomes
from vlstress.suites.calibration.run import evaluation_logits
from vlstress.suites.calibration.suite import SUITE

HEADLINES = SUITE.tasks["calibration"].headlines


def _evaluations():
    import importlib

    from vlstress.params import Params

    params = Params.load([Path("params.yaml")])
    modules = EVALUATIONS[1].split(",")
    found = [e for m in modules for e in importlib.import_module(m).evaluations(params)]
    return [e.for_model("m") for e in found]


def _calibrate():
    from vlstress.params import Params
    from vlstress.suites.calibration.run import calibrate

    return calibrate(
        Params.load([Path("params.yaml")]),
        params_files=[Path("params.yaml")],
        model_slug="m",
        modules=EVALUATIONS[1].split(","),
        in_distribution="objects",
        fit_fraction=0.5,
        seed=0,
        n_bins=15,
        log=logging.getLogger("test"),
    )


def _by_set(calibration) -> dict:
    """Set name -> (record, its block)."""
    return {
        r.condition["set"]: (r, block)
        for r, block in zip(calibration.records, calibration.outcomes)
    }


def _statistic(headline, block) -> float:
    resampling = headline.resampling(block)
    return resampling.statistic(*resampling.samples)


def test_each_headline_recomputes_its_record_from_the_images_behind_it(project):  # noqa: F811
    calibration = _calibrate()
    assert len(calibration.outcomes) == len(calibration.records) == 2
    assert [h.metric for h in HEADLINES if h.resampling] == ["ece", "ece_ts"]
    for record, block in zip(calibration.records, calibration.outcomes):
        # the record's images: the 20 held-out ID images, the 40 of the shifted set
        assert block.unit == "image" and block.n == record.dataset["n_images"]
        m = record.metrics
        assert 100 * block.column("correct").mean() == pytest.approx(m["top1"], rel=1e-12)
        assert 100 * block.column("confidence").mean() == pytest.approx(m["confidence"], rel=1e-12)
        assert 100 * block.column("confidence_ts").mean() == pytest.approx(
            m["confidence_ts"], rel=1e-12
        )
        for headline in HEADLINES:
            assert _statistic(headline, block) == pytest.approx(m[headline.metric], rel=1e-6)
    by_set = _by_set(calibration)
    assert by_set["objects"][0].condition["split"] == "held-out"
    assert by_set["objects"][1].n == 20 and by_set["noisy"][1].n == 40
    # the held-out block is the held-out images, in order: their softmax as the record takes it
    logits, labels, _, _ = evaluation_logits(
        next(e for e in _evaluations() if e.condition == {"set": "objects"})
    )
    rows = np.array(calibration.bins["held_out_rows"])
    probs = cal.softmax(logits[rows])
    block = by_set["objects"][1]
    np.testing.assert_array_equal(block.column("confidence"), probs.max(axis=1))
    np.testing.assert_array_equal(
        block.column("correct"), probs.argmax(axis=1) == np.asarray(labels)[rows]
    )


def test_the_block_carries_the_number_of_bins():
    """The statistic bins as the record did (here 7 bins, not the default 15)."""
    rng = np.random.default_rng(3)
    logits = 2 * rng.normal(size=(60, 5))
    # the top class right for about 70% of the images: the bins see both signs of the gap
    labels = np.where(rng.random(60) < 0.6, logits.argmax(axis=1), rng.integers(0, 5, size=60))
    block = image_outcomes(logits, labels, temperature=2.0, n_bins=7)
    expected = 100 * cal.ece(logits, labels, 7)
    assert _statistic(HEADLINES[0], block) == pytest.approx(expected, rel=1e-6)
    assert expected != pytest.approx(100 * cal.ece(logits, labels, 15), rel=1e-3)
    scaled = 100 * cal.ece(logits / 2.0, labels, 7)
    assert _statistic(HEADLINES[1], block) == pytest.approx(scaled, rel=1e-6)


def test_the_command_writes_the_blocks_beside_its_records(project, capsys):  # noqa: F811
    code, err = call(
        capsys,
        "calibrate",
        "--params",
        "params.yaml",
        "--model",
        "m",
        *EVALUATIONS,
        "--in-distribution",
        "objects",
        "--out",
        "cal.json",
        "--out-fig",
        "rel.png",
    )
    assert code == 0, err
    assert outcomes_path("cal.json") == Path("cal.outcomes.npz")
    read = read_outcomes(project / "cal.outcomes.npz")
    records = read_records(project / "cal.json")
    expected = _calibrate().outcomes
    assert len(read) == len(records) == len(expected)
    for block, want, record in zip(read, expected, records):
        assert block.unit == want.unit and set(block.columns) == set(want.columns)
        for name, values in want.columns.items():
            np.testing.assert_array_equal(block.column(name), values)
            assert block.column(name).dtype == np.asarray(values).dtype
        for headline in HEADLINES:
            assert _statistic(headline, block) == pytest.approx(
                record.metrics[headline.metric], rel=1e-6
            )


def test_a_bca_bootstrap_of_the_images_brackets_the_record(project):  # noqa: F811
    calibration = _calibrate()
    shifted, block = _by_set(calibration)["noisy"]
    for headline in HEADLINES:
        resampling = headline.resampling(block)
        value = shifted.metrics[headline.metric]
        interval = bootstrap(
            resampling.samples,
            resampling.statistic,
            paired=resampling.paired,
            method="BCa",
            random_state=0,
            n_resamples=200,
        ).confidence_interval
        assert interval.low < value < interval.high, (headline.metric, interval, value)


def test_the_statistic_is_the_ece_of_the_resampled_images():
    """A resample is a set of whole images: its ECE is the ECE of those images' logits."""
    rng = np.random.default_rng(5)
    logits = 3 * rng.normal(size=(30, 4))
    labels = rng.integers(0, 4, size=30)
    resampling = ece_resampling(image_outcomes(logits, labels, temperature=1.5))
    assert resampling.paired
    rows = rng.integers(0, 30, size=30)
    picked = [sample[rows] for sample in resampling.samples]
    assert resampling.statistic(*picked) == pytest.approx(
        100 * cal.ece(logits[rows], labels[rows]), rel=1e-6
    )


def test_the_batched_ece_equals_the_exact_one_on_every_resample():
    """The bootstrap's ECE (many resamples at once, float64 sums) against the record's float32
    `calibration_error`, resample by resample, including confidences of exactly 1."""
    from vlstress.suites.calibration.resampling import ece_percent, ece_percent_batch

    rng = np.random.default_rng(11)
    confidence = np.concatenate([rng.uniform(0.2, 1.0, 58), [1.0, 1.0]])
    correct = rng.random(60) < confidence
    rows = rng.integers(0, 60, size=(25, 60))
    batch = ece_percent_batch(confidence[rows], correct[rows], 15)
    exact = [ece_percent(confidence[r], correct[r], 15) for r in rows]
    assert batch.shape == (25,)
    assert batch == pytest.approx(exact, rel=1e-5, abs=1e-5)
    by_column = ece_percent_batch(confidence[rows].T, correct[rows].T, 15, axis=0)
    assert by_column == pytest.approx(batch)
