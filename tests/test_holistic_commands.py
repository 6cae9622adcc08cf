"""`vlstress calibrate` and `vlstress ood-detect` on hand-made embeddings and classifiers (no model
runs).

Known geometry: images sit on (or between) their class weights, so accuracy, the fitted
temperature's effect and the OOD scores are predictable; bad inputs name the problem
and leave nothing behind.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from vlstress import cli
from vlstress.io import sidecar, write_json, write_npy
from vlstress.record import read_records
from vlstress.testsets import manifest as testsets

REPO = Path(__file__).resolve().parents[1]
MODEL = {
    "slug": "m",
    "arch": "RN50",
    "pretrained": None,
    "weights": "random-init",
    "weights_label": "random-init (seed 0)",
    "seed": 0,
}
DIM = 8
EVALUATIONS = (
    "--evaluations-from",
    "vlstress.suites.zeroshot.paths,vlstress.suites.corruptions.paths,vlstress.suites.typographic.paths",
)


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def write_set(root: Path, folder: str, name: str, classes: list[str], labels: list[int]) -> Path:
    path = root / folder
    images = [{"path": f"{i}.png", "label": label} for i, label in enumerate(labels)]
    testsets.write(
        path / "manifest.json",
        testsets.ClassificationSet(name, "imagefolder", classes, classes, str(path), images),
    )
    return path


def write_embeddings(path: Path, rows: np.ndarray) -> None:
    write_npy(path, unit(rows))
    write_json(
        sidecar(path),
        {"kind": "image-embeddings", "provenance": {"model": MODEL, "seed": 0, "device": "cpu"}},
    )


def write_classifier(
    path: Path, classes: list[str], weights: np.ndarray, scale: float = 100.0
) -> None:
    write_npy(path, unit(weights))
    write_json(
        sidecar(path),
        {
            "kind": "zeroshot-classifier",
            "classes": classes,
            "logit_scale": scale,
            "provenance": {"model": MODEL},
        },
    )


def call(capsys, *argv: str) -> tuple[int, str]:
    code = cli.main(list(argv))
    return code, capsys.readouterr().err


@pytest.fixture
def project(tmp_path, monkeypatch):
    """objects (ID, 4 classes, 40 images: 3 of 4 near their class) and a shifted copy with more
    noise."""
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    classes = ["a", "b", "c", "d"]
    weights = np.eye(4, DIM)
    labels = [i % 4 for i in range(40)]
    near = weights[labels] + 0.3 * rng.normal(size=(40, DIM))
    # every 4th image sits on a wrong class
    near[::4] = weights[(np.array(labels[::4]) + 1) % 4] + 0.1
    write_set(tmp_path, "data/testsets/objects", "objects", classes, labels)
    write_set(tmp_path, "data/testsets/noisy", "noisy", classes, labels)
    write_embeddings(tmp_path / "results/embeddings/m/zeroshot/testsets/objects.npy", near)
    write_embeddings(
        tmp_path / "results/embeddings/m/zeroshot/testsets/noisy.npy",
        weights[labels] + 1.5 * rng.normal(size=(40, DIM)),
    )
    for name in ("objects", "noisy"):
        write_classifier(
            tmp_path / f"results/embeddings/m/classifiers/{name}.npy", classes, weights
        )
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    params["suites"] = {"zeroshot": True, "calibration": True}
    entry = params["zeroshot"]["testsets"]["objects"]
    params["zeroshot"]["testsets"] = {"objects": entry, "noisy": copy.deepcopy(entry)}
    params["models"] = {"m": {"arch": "RN50", "pretrained": None}}
    params["zeroshot"]["robustness"]["mce_baseline"] = None
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    return tmp_path


def test_calibrate_fits_on_held_out_id_and_carries_t_to_the_shift(project, capsys):
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
    records = read_records(project / "cal.json")
    by_set = {(r.condition["set"], r.condition.get("split")): r for r in records}
    assert set(by_set) == {("objects", "held-out"), ("noisy", None)}
    held, noisy = by_set[("objects", "held-out")], by_set[("noisy", None)]
    assert (
        held.dataset["n_images"] == 20
        and held.metrics["n_fit"] == 20
        and noisy.dataset["n_images"] == 40
    )
    assert held.metrics["temperature"] == noisy.metrics["temperature"] > 0
    # logit scale 100 on near-one-hot cosines is over-confident: the fitted T softens it
    assert (
        held.metrics["temperature"] > 1
        and held.metrics["confidence_ts"] < held.metrics["confidence"]
    )
    bins = json.loads((project / "cal.json.json").read_text())
    assert sorted(bins["fit_rows"] + bins["held_out_rows"]) == list(range(40))
    counts = {entry["dataset"]: sum(entry["raw"]["counts"]) for entry in bins["sets"]}
    assert counts == {"objects": 20, "noisy": 40}
    assert (project / "rel.png").is_file() and (project / "rel.pdf").is_file()


def test_calibrate_names_a_missing_in_distribution_set(project, capsys):
    code, err = call(
        capsys,
        "calibrate",
        "--params",
        "params.yaml",
        "--model",
        "m",
        *EVALUATIONS,
        "--in-distribution",
        "nope",
        "--out",
        "cal.json",
        "--out-fig",
        "rel.png",
    )
    assert code == 2 and "in-distribution set 'nope' is not a zero-shot test set" in err
    assert not (project / "cal.json").exists()
    (project / "results/embeddings/m/zeroshot/testsets/noisy.npy").unlink()
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
    assert (
        code == 2
        and "embeddings not found: results/embeddings/m/zeroshot/testsets/noisy.npy" in err
    )
    assert not (project / "cal.json").exists()


def test_ood_detect_separates_far_images_and_refuses_shared_classes(project, capsys):
    rng = np.random.default_rng(1)
    write_set(project, "data/ood/far", "far", ["x", "y"], [0, 1] * 10)
    write_embeddings(
        project / "results/embeddings/m/zeroshot/ood/far.npy",
        np.eye(DIM)[[6, 7] * 10] + 0.05 * rng.normal(size=(20, DIM)),
    )
    flags = [
        "--testset",
        "data/testsets/objects",
        "--image-emb",
        "results/embeddings/m/zeroshot/testsets/objects.npy",
        "--classifier",
        "results/embeddings/m/classifiers/objects.npy",
        "--ood-emb",
        "results/embeddings/m/zeroshot/ood/far.npy",
    ]
    code, err = call(
        capsys,
        "ood-detect",
        *flags,
        "--ood-testset",
        "data/ood/far",
        "--out",
        "ood.json",
        "--out-fig",
        "roc.png",
    )
    assert code == 0, err
    records = read_records(project / "ood.json")
    assert [r.condition for r in records] == [
        {"ood": "far", "score": s} for s in ("mcm", "msp", "max_logit", "energy")
    ]
    for (
        record
    ) in records:  # OOD images are orthogonal to every class weight: every score ranks them last
        assert record.metrics["auroc"] == 100.0 and record.metrics["fpr95"] == 0.0
    roc = json.loads((project / "ood.json.json").read_text())["roc"]
    assert roc["mcm"]["tpr"][-1] == 1.0
    write_set(project, "data/ood/shared", "shared", ["a", "z"], [0, 1] * 10)
    code, err = call(
        capsys,
        "ood-detect",
        *flags,
        "--ood-testset",
        "data/ood/shared",
        "--out",
        "bad.json",
        "--out-fig",
        "bad.png",
    )
    assert code == 2 and "shares class(es) with the in-distribution set objects: a" in err
    assert not (project / "bad.json").exists()
