"""The per-image outcomes of `vlstress ood-detect`: each record's block holds the score of every
in-distribution image, then of every OOD image, the suite's headline statistics recompute the
record's AUROC and FPR@95 from it, the command writes it beside the records, and a stratified BCa
bootstrap of it brackets the record. Hand-made embeddings (the `project` of the command tests);
no model runs."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import bootstrap
from test_holistic_commands import (  # noqa: F401  (project: the ID set objects, 40 images)
    DIM,
    call,
    project,
    unit,
    write_embeddings,
    write_set,
)

from vlstress.outcomes import outcomes_path, read_outcomes
from vlstress.record import read_records
from vlstress.suites.ood import scores as ood
from vlstress.suites.ood.resampling import auroc_resampling, image_outcomes
from vlstress.suites.ood.suite import SUITE

HEADLINES = SUITE.tasks["ood"].headlines
SCORES = ["mcm", "msp", "max_logit", "energy"]
N_OOD = 30
ID_EMB = "results/embeddings/m/zeroshot/testsets/objects.npy"
OOD_EMB = "results/embeddings/m/zeroshot/ood/near.npy"
CLASSIFIER = "results/embeddings/m/classifiers/objects.npy"


def _near_ood(root: Path) -> np.ndarray:
    """An OOD set of 30 images half-way between a class weight and the unused dimensions: scored
    lower than most ID images, not all (AUROC inside (50, 100)). Returns its embeddings."""
    rng = np.random.default_rng(1)
    write_set(root, "data/ood/near", "near", ["x", "y"], [0, 1] * (N_OOD // 2))
    rows = np.eye(DIM)[rng.integers(0, 4, N_OOD)] + 0.8 * rng.normal(size=(N_OOD, DIM))
    write_embeddings(root / OOD_EMB, rows)
    return unit(rows)


def _detect():
    from vlstress.suites.ood.run import detect

    return detect(
        Path("data/testsets/objects"),
        Path(ID_EMB),
        Path(CLASSIFIER),
        Path("data/ood/near"),
        Path(OOD_EMB),
        scores=SCORES,
        temperature=1.0,
        log=logging.getLogger("test"),
    )


def _statistic(headline, block) -> float:
    resampling = headline.resampling(block)
    return resampling.statistic(*resampling.samples)


def test_each_headline_recomputes_its_record_from_the_scores_behind_it(project):  # noqa: F811
    ood_rows = _near_ood(project)
    detection = _detect()
    assert [r.condition["score"] for r in detection.records] == SCORES
    assert len(detection.outcomes) == len(detection.records)
    assert [h.metric for h in HEADLINES if h.resampling] == ["auroc", "fpr95"]
    for record, block in zip(detection.records, detection.outcomes):
        assert block.unit == "image" and block.n == 40 + N_OOD
        np.testing.assert_array_equal(block.column("is_ood"), [False] * 40 + [True] * N_OOD)
        for headline in HEADLINES:
            assert _statistic(headline, block) == pytest.approx(
                record.metrics[headline.metric], rel=1e-6
            )
        assert 50 < record.metrics["auroc"] < 100  # neither side wins outright
    # the max logit of each image, ID then OOD: logit scale 100 times its top cosine
    id_rows = unit(np.load(project / ID_EMB))
    weights = unit(np.load(project / CLASSIFIER))
    max_logit = detection.outcomes[SCORES.index("max_logit")].column("score")
    expected = 100 * (np.concatenate([id_rows, ood_rows]) @ weights.T).max(axis=1)
    np.testing.assert_allclose(max_logit, expected, rtol=1e-5)


def test_the_command_writes_the_blocks_beside_its_records(project, capsys):  # noqa: F811
    _near_ood(project)
    code, err = call(
        capsys,
        "ood-detect",
        "--testset",
        "data/testsets/objects",
        "--image-emb",
        ID_EMB,
        "--classifier",
        CLASSIFIER,
        "--ood-testset",
        "data/ood/near",
        "--ood-emb",
        OOD_EMB,
        "--out",
        "ood-near.json",
        "--out-fig",
        "roc.png",
    )
    assert code == 0, err
    assert outcomes_path("ood-near.json") == Path("ood-near.outcomes.npz")
    read = read_outcomes(project / "ood-near.outcomes.npz")
    records = read_records(project / "ood-near.json")
    expected = _detect().outcomes
    assert len(read) == len(records) == len(expected) == len(SCORES)
    for block, want, record in zip(read, expected, records):
        assert block.unit == want.unit and set(block.columns) == {"score", "is_ood"}
        for name, values in want.columns.items():
            np.testing.assert_array_equal(block.column(name), values)
            assert block.column(name).dtype == np.asarray(values).dtype
        for headline in HEADLINES:
            assert _statistic(headline, block) == pytest.approx(
                record.metrics[headline.metric], rel=1e-6
            )


def test_a_stratified_bca_bootstrap_brackets_the_record(project):  # noqa: F811
    _near_ood(project)
    detection = _detect()
    record = detection.records[SCORES.index("msp")]
    block = detection.outcomes[SCORES.index("msp")]
    for headline in HEADLINES:
        resampling = headline.resampling(block)
        assert not resampling.paired
        assert [len(s) for s in resampling.samples] == [40, N_OOD]
        value = record.metrics[headline.metric]
        interval = bootstrap(
            resampling.samples,
            resampling.statistic,
            paired=resampling.paired,
            method="BCa",
            random_state=0,
            n_resamples=200,
        ).confidence_interval
        assert interval.low < value < interval.high, (headline.metric, interval, value)


def test_the_statistics_agree_with_the_detection_metrics_on_any_two_sets():
    rng = np.random.default_rng(2)
    id_scores, ood_scores = rng.normal(1.0, 1.0, 25), rng.normal(0.0, 1.0, 35)
    block = image_outcomes(id_scores, ood_scores)
    metrics = ood.detection_metrics(id_scores, ood_scores)
    for headline in HEADLINES:
        assert _statistic(headline, block) == pytest.approx(metrics[headline.metric], rel=1e-6)
    # an ID image swapped below every OOD image lowers the AUROC by 35 of the 25 * 35 pairs
    lower = id_scores.copy()
    lower[np.argmax(lower)] = ood_scores.min() - 1
    swapped = auroc_resampling(image_outcomes(lower, ood_scores))
    drop = _statistic(HEADLINES[0], block) - swapped.statistic(*swapped.samples)
    above = (ood_scores > id_scores.max()).sum()
    assert drop == pytest.approx(100 * (35 - above) / (25 * 35), rel=1e-9)


def test_a_block_with_one_side_only_is_refused():
    from vlstress.errors import VlstressError

    with pytest.raises(VlstressError, match="0 ID and 3 OOD images"):
        auroc_resampling(image_outcomes(np.array([]), np.array([0.1, 0.2, 0.3])))


def test_the_numpy_statistics_equal_scikit_learns_with_ties_and_small_sets():
    """The bootstrap's AUROC (Mann-Whitney) and FPR@95 (thresholds in NumPy) against the record's
    scikit-learn ROC, on rounded scores full of ties and sets of 1 to 40 images."""
    from vlstress.suites.ood.resampling import auroc_percent, fpr95_percent

    rng = np.random.default_rng(7)
    for _ in range(300):
        n_id, n_ood = rng.integers(1, 40, 2)
        step = rng.choice([1.0, 0.1, 0.001])
        id_scores = np.round(rng.normal(0.5, 1.0, n_id) / step) * step
        ood_scores = np.round(rng.normal(0.0, 1.0, n_ood) / step) * step
        assert auroc_percent(id_scores, ood_scores) == pytest.approx(
            100 * ood.auroc(id_scores, ood_scores), abs=1e-9
        )
        assert fpr95_percent(id_scores, ood_scores) == pytest.approx(
            100 * ood.fpr_at_tpr(id_scores, ood_scores), abs=1e-9
        )


def test_the_statistics_of_a_batch_of_resamples_are_those_of_each_resample():
    """scipy's vectorized bootstrap hands the statistics resamples as rows: each row's value is the
    value of that resample alone (ties, small sets, either axis)."""
    from vlstress.suites.ood.resampling import auroc_percent, fpr95_percent

    rng = np.random.default_rng(3)
    for n_id, n_ood in ((1, 1), (2, 5), (19, 3), (40, 40)):
        id_rows = np.round(rng.normal(0.5, 1.0, (6, n_id)), 1)
        ood_rows = np.round(rng.normal(0.0, 1.0, (6, n_ood)), 1)
        for statistic in (auroc_percent, fpr95_percent):
            batch = statistic(id_rows, ood_rows)
            assert batch.shape == (6,)
            assert batch.tolist() == [statistic(i, o) for i, o in zip(id_rows, ood_rows)]
            assert statistic(id_rows.T, ood_rows.T, axis=0).tolist() == batch.tolist()


def _two_ood_sets(root: Path) -> None:
    """params.yaml with the OOD suite on and two OOD sets: `near` and `far` (far from every class:
    AUROC 100)."""
    import yaml

    _near_ood(root)
    write_set(root, "data/ood/far", "far", ["x", "y"], [0, 1] * 5)
    write_embeddings(root / "results/embeddings/m/zeroshot/ood/far.npy", -np.eye(DIM)[[0] * 10])
    params = yaml.safe_load((root / "params.yaml").read_text())
    params["suites"]["ood"] = True
    entry = params["zeroshot"]["testsets"]["objects"]
    params["ood"].update(in_distribution="objects", sets={"near": entry, "far": dict(entry)})
    (root / "params.yaml").write_text(yaml.safe_dump(params))


def _detect_sets(capsys):
    return call(
        capsys,
        "ood-detect-sets",
        *("--params", "params.yaml", "--model", "m", "--testset", "data/testsets/objects"),
        *("--image-emb", ID_EMB, "--classifier", CLASSIFIER),
        *("--emb", "results/embeddings/m/zeroshot", "--out-dir", "out", "--fig-dir", "figs"),
    )


def test_ood_detect_sets_writes_what_ood_detect_writes_for_each_set(project, capsys):  # noqa: F811
    _two_ood_sets(project)
    code, err = _detect_sets(capsys)
    assert code == 0, err
    assert sorted(p.name for p in (project / "figs").iterdir()) == [
        f"ood_roc_m_{name}.{ext}" for name in ("far", "near") for ext in ("pdf", "png")
    ]
    for name in ("near", "far"):
        emb = f"results/embeddings/m/zeroshot/ood/{name}.npy"
        code, err = call(
            capsys,
            "ood-detect",
            *("--testset", "data/testsets/objects", "--image-emb", ID_EMB),
            *("--classifier", CLASSIFIER, "--ood-testset", f"data/ood/{name}"),
            *("--ood-emb", emb, "--out", f"one-{name}.json", "--out-fig", f"one-{name}.png"),
        )
        assert code == 0, err
        got = read_records(project / f"out/ood-{name}.json")
        want = read_records(project / f"one-{name}.json")
        assert [(r.condition, r.metrics) for r in got] == [(r.condition, r.metrics) for r in want]
        for a, b in zip(
            read_outcomes(project / f"out/ood-{name}.outcomes.npz"),
            read_outcomes(project / f"one-{name}.outcomes.npz"),
        ):
            np.testing.assert_array_equal(a.column("score"), b.column("score"))
        assert (project / f"out/ood-{name}.json.json").read_bytes() == (
            project / f"one-{name}.json.json"
        ).read_bytes()
    far = read_records(project / "out/ood-far.json")
    assert [r.metrics["auroc"] for r in far] == [100.0] * len(SCORES)
    assert all(r.metrics["auroc"] < 100 for r in read_records(project / "out/ood-near.json"))


def test_ood_detect_sets_writes_nothing_when_one_set_is_bad(project, capsys):  # noqa: F811
    _two_ood_sets(project)
    (project / "results/embeddings/m/zeroshot/ood/near.npy").unlink()
    code, err = _detect_sets(capsys)
    assert code == 2 and "near.npy" in err
    assert not (project / "out").exists() and not (project / "figs").exists()
