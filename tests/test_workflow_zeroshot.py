"""The zero-shot suites end to end on real photos: object crops of ../shared/data/coco-mini
(`coco-objects`), two small random-init models, Snakemake (slow: a few minutes; skips
without the shared data). Checks what must hold whatever the weights."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import copy_repo

pytestmark = pytest.mark.slow
pytest.importorskip("snakemake")
ENV = {**os.environ, "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")}
MODELS = {"vit-s-32-random": {"arch": "ViT-S-32", "pretrained": None}, "vit-s-32-alt-random": {"arch": "ViT-S-32-alt", "pretrained": None}}
CORRUPTIONS = ["gaussian_noise", "fog"]
SEVERITIES = [1, 5]


def _params(root: Path, shared_data: Path) -> dict:
    params = yaml.safe_load((root / "params.yaml").read_text())
    coco = shared_data / "coco-mini"
    params["suites"] = {"rococo_text": False, "rococo_image": False, "zeroshot": True, "corruptions": True, "typographic": True}
    params["models"] = MODELS
    params["zeroshot"]["testsets"] = {
        "coco_objects": {
            "kind": "coco-objects", "root": str(coco / "images"), "annotations": str(coco / "annotations/instances_val2017.json"),
            "classnames": None, "max_per_class": None, "min_size": 32, "label": "category", "corruption": None,
        },
    }  # fmt: skip
    params["zeroshot"]["in_distribution"] = "coco_objects"
    params["zeroshot"]["robustness"]["mce_baseline"] = "vit-s-32-random"
    params["corruptions"].update({"testset": "coco_objects", "names": CORRUPTIONS, "severities": SEVERITIES, "size": 96})
    params["typographic"].update({"testset": "coco_objects", "size": 96})
    return params


@pytest.fixture(scope="module")
def run(tmp_path_factory, shared_data) -> Path:
    root = copy_repo(tmp_path_factory.mktemp("zeroshot") / "repo")
    (root / "params.yaml").write_text(yaml.safe_dump(_params(root, shared_data), sort_keys=False))
    result = subprocess.run(["snakemake", "--cores", "2"], cwd=root, env=ENV, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-5000:]
    return root


def _record(root: Path, model: str, name: str) -> dict:
    return json.loads((root / f"results/metrics/{model}/{name}.json").read_text())


def test_zeroshot_records_on_coco_crops(run):
    manifest = json.loads((run / "data/testsets/coco_objects/manifest.json").read_text())
    assert len(manifest["images"]) > 300 and 60 <= len(manifest["classes"]) <= 80
    for model in MODELS:
        record = _record(run, model, "zeroshot-coco_objects")
        assert record["task"] == "zeroshot" and record["dataset"]["n_images"] == len(manifest["images"])
        metrics = record["metrics"]
        assert 0 <= metrics["top1"] <= metrics["top5"] <= 100
        per_class = json.loads((run / f"results/metrics/{model}/zeroshot-coco_objects.json.json").read_text())
        counts = per_class["n_images"]
        # top-1 is the image-weighted mean of the per-class accuracies
        weighted = sum(acc * n for acc, n in zip(per_class["top1"], counts) if acc is not None) / sum(counts)
        assert weighted == pytest.approx(metrics["top1"], abs=1e-6)


def test_corruption_and_typographic_records(run):
    for model in MODELS:
        clean = _record(run, model, "zeroshot-coco_objects")["metrics"]["top1"]
        for name in CORRUPTIONS:
            for severity in SEVERITIES:
                record = _record(run, model, f"corruption-{name}-s{severity}")
                assert record["condition"] == {"corruption": name, "severity": severity}
                assert record["metrics"]["top1_clean"] == clean
                assert record["metrics"]["drop"] == pytest.approx(clean - record["metrics"]["top1"])
        typo = _record(run, model, "typographic")
        assert typo["condition"] == {"attack": "typographic"} and 0 <= typo["metrics"]["attack_success"] <= 100
    attacked = json.loads((run / "data/typographic/coco_objects/manifest.json").read_text())["images"]
    assert all(entry["written"] != entry["label"] for entry in attacked)


def test_robustness_tables(run):
    corruptions = pd.read_csv(run / "results/robustness/corruptions.csv").set_index("model")
    assert corruptions.loc["vit-s-32-random", "mCE"] == pytest.approx(100.0)  # the baseline against itself
    for model in MODELS:
        top1 = [_record(run, model, f"corruption-{c}-s{s}")["metrics"]["top1"] for c in CORRUPTIONS for s in SEVERITIES]
        assert corruptions.loc[model, "mCA"] == pytest.approx(sum(top1) / len(top1), abs=1e-3)
    effective = pd.read_csv(run / "results/robustness/effective.csv")
    assert {"corruptions (mean)", "typographic attack"} <= set(effective["shift"])
    note = json.loads((run / "results/robustness/metrics.json").read_text())["note"]
    if note is None:  # two models: the fitted line passes through both, so their effective robustness is 0
        assert effective["effective_robustness"].abs().max() < 1e-6
    else:  # random-init models at one in-distribution accuracy: no line, said so, ER left empty
        assert "no baseline line" in note and effective["effective_robustness"].isna().all()
    rr = effective["shifted_accuracy"] - effective["id_accuracy"]
    assert (effective["relative_robustness"] - rr).abs().max() < 2e-6  # the CSV keeps 6 decimals
    for figure in ("zeroshot_accuracy", "corruption_heatmap", "corruption_severity", "typographic_attack", "effective_robustness"):
        assert (run / f"results/figures/{figure}.png").stat().st_size > 10_000
