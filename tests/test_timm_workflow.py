"""A timm classifier beside an image-text model, end to end in both front ends (slow): Snakemake
builds the classification suites for both models and retrieval for the image-text one only; neither
front end has anything left to do after it, and DVC, rerunning the classifier's steps, writes the
same bytes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import committed_copy, dvc_reruns_to_the_same_bytes

pytestmark = pytest.mark.slow
pytest.importorskip("snakemake")
pytest.importorskip("dvc")
ENV = {
    **os.environ,
    "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
}
CLIP, TIMM = "vit-s-32-random", "resnet18-random"
ON = ("zeroshot", "corruptions", "typographic", "adversarial", "calibration", "ood", "shape_bias")


def small(params: dict) -> dict:
    """Retrieval on 4 photos; the classification suites on one view of each demo class."""
    params["dataset"]["max_images"] = 4
    params["models"] = {
        CLIP: {"arch": "ViT-S-32", "pretrained": None},
        TIMM: {"arch": "timm:resnet18", "pretrained": None},
    }
    params["suites"] = {name: name in ON for name in params["suites"]}
    params["zeroshot"]["testsets"]["objects"]["max_per_class"] = 1
    params["zeroshot"]["robustness"]["mce_baseline"] = CLIP
    params["ood"]["sets"]["scenes"]["max_per_class"] = 1
    params["corruptions"].update(names=["gaussian_noise"], severities=[3], size=64)
    params["typographic"]["size"] = 96
    fgsm = {"name": "fgsm", "kind": "fgsm", "norm": "linf", "eps": "2", "steps": None}
    params["adversarial"].update(
        n_images=4, attacks=[{**fgsm, "alpha": None, "restarts": 1, "extra": None}]
    )
    return params


def sh(*cmd: str, cwd: Path) -> str:
    result = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True)
    if result.returncode != 0:
        output = f"{result.stdout[-3000:]}\n{result.stderr[-5000:]}"
        raise AssertionError(f"{' '.join(cmd)} failed:\n{output}")
    return result.stdout + result.stderr


@pytest.fixture(scope="module")
def project(module_tmp) -> Path:
    root = committed_copy(module_tmp.mktemp("timm") / "repo", small)
    sh("snakemake", "--cores", "2", cwd=root)
    return root


def test_the_classifier_takes_part_in_the_classification_suites_only(project):
    metrics = project / "results/metrics"
    for model in (CLIP, TIMM):
        for name in ("zeroshot-objects", "corruption-gaussian_noise-s3", "typographic"):
            record = json.loads((metrics / model / f"{name}.json").read_text())
            assert record["provenance"]["model"]["kind"] == (
                "timm" if model == TIMM else "open_clip"
            )
            assert 0 <= record["metrics"]["top1"] <= 100
        for name in ("adversarial-fgsm", "calibration", "ood-scenes", "shape_bias"):
            assert (metrics / model / f"{name}.json").is_file(), (model, name)
    assert (metrics / CLIP / "original.json").is_file()
    assert not (metrics / TIMM / "original.json").exists()
    assert not (project / "results/embeddings" / TIMM / "retrieval").exists()
    # its classifier is the demo's class map: 5 classes x 1000 ImageNet classes, rows of mean 1/k
    classifier = project / "results/embeddings" / TIMM / "classifiers/objects.npy"
    meta = json.loads(classifier.with_name("objects.npy.json").read_text())
    assert meta["scores"] == "imagenet-probabilities" and meta["shape"] == [5, 1000]
    assert meta["imagenet_map"]["file"] == "demo.json"
    import pandas as pd

    summary = pd.read_csv(project / "results/summary.csv")
    tasks = {model: set(rows["task"]) for model, rows in summary.groupby("model")}
    assert "retrieval" in tasks[CLIP] and "retrieval" not in tasks[TIMM]
    assert {"zeroshot", "corruption", "typographic", "calibration"} <= tasks[TIMM]


def test_dvc_reruns_the_classifiers_steps_to_the_same_bytes_and_both_are_idle(project):
    """DVC, forced to rerun every step of the timm model on its own (in the tree Snakemake built),
    writes the bytes Snakemake wrote. (A whole second build by DVC in a clone took 8 minutes.)"""
    assert "Nothing to be done" in sh("snakemake", "-n", cwd=project)
    assert "Data and pipelines are up to date" in sh("dvc", "status", cwd=project)
    locked = list(yaml.safe_load((project / "dvc.lock").read_text())["stages"])
    # retrieval for the image-text model only (one model: a plain stage, `embed_retrieval-<model>`)
    retrieval = [name for name in locked if name.startswith("embed_retrieval")]
    assert retrieval and all(CLIP in name and TIMM not in name for name in retrieval), retrieval
    # the timm model's steps: `stage@resnet18-random` and `stage@resnet18-random-<condition>`
    steps = [name for name in locked if name.partition("@")[2].startswith(TIMM)]
    assert {"embed_zeroshot", "attack", "calibrate", "ood_detect"} <= {
        name.split("@")[0] for name in steps
    }, steps
    dvc_reruns_to_the_same_bytes(project, steps, ENV)
