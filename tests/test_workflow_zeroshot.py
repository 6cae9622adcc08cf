"""The zero-shot suites end to end on real photos: object crops of ../shared/data/coco-mini
(`coco-objects`), two small random-init models, Snakemake (slow: a few minutes; skips
without the shared data). Checks what must hold whatever the weights.

In distribution: the crops of every supercategory but animals; out of distribution: the
animal crops (the offline OOD protocol of docs/holistic.md); calibration over every set."""

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
ENV = {
    **os.environ,
    "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
}
MODELS = {
    "vit-s-32-random": {"arch": "ViT-S-32", "pretrained": None},
    "vit-s-32-alt-random": {"arch": "ViT-S-32-alt", "pretrained": None},
}
CORRUPTIONS = ["gaussian_noise", "fog"]
SEVERITIES = [1, 5]
# crops per class: every class of the real photos, few images
# (the step runs 2 models x 6 image sets)
PER_CLASS = 2


def expected_crops(shared_data: Path) -> dict[str, int]:
    """Crops per supercategory as the test set should keep them: boxes >= 32 px, no crowd, PER_CLASS
    per category."""
    data = json.loads((shared_data / "coco-mini/annotations/instances_val2017.json").read_text())
    supers = {c["id"]: c["supercategory"] for c in data["categories"]}
    per_category: dict[int, int] = {}
    for ann in data["annotations"]:
        if not ann.get("iscrowd") and ann["bbox"][2] >= 32 and ann["bbox"][3] >= 32:
            per_category[ann["category_id"]] = per_category.get(ann["category_id"], 0) + 1
    found: dict[str, int] = {}
    for cid, n in per_category.items():
        found[supers[cid]] = found.get(supers[cid], 0) + min(n, PER_CLASS)
    return found


def _params(root: Path, shared_data: Path) -> dict:
    params = yaml.safe_load((root / "params.yaml").read_text())
    coco = shared_data / "coco-mini"
    params["suites"] = {
        "rococo_text": False,
        "rococo_image": False,
        "zeroshot": True,
        "corruptions": True,
        "typographic": True,
        "calibration": True,
        "ood": True,
    }
    params["models"] = MODELS
    crops = {
        "kind": "coco-objects",
        "root": str(coco / "images"),
        "annotations": str(coco / "annotations/instances_val2017.json"),
        "classnames": None,
        "max_per_class": PER_CLASS,
        "min_size": 32,
        "label": "category",
        "corruption": None,
    }
    params["zeroshot"]["testsets"] = {"coco_objects": {**crops, "keep": None, "drop": "animal"}}
    params["zeroshot"]["imagenet_maps"] = None  # the demo's map names its `objects` set
    params["ood"].update(
        in_distribution="coco_objects", sets={"animals": {**crops, "keep": "animal", "drop": None}}
    )
    params["calibration"]["in_distribution"] = "coco_objects"
    params["zeroshot"]["in_distribution"] = "coco_objects"
    params["zeroshot"]["robustness"]["mce_baseline"] = "vit-s-32-random"
    params["corruptions"].update(
        {"testset": "coco_objects", "names": CORRUPTIONS, "severities": SEVERITIES, "size": 96}
    )
    params["typographic"].update({"testset": "coco_objects", "size": 96})
    return params


@pytest.fixture(scope="module")
def run(module_tmp, shared_data) -> Path:
    root = copy_repo(module_tmp.mktemp("zeroshot") / "repo")
    (root / "params.yaml").write_text(yaml.safe_dump(_params(root, shared_data), sort_keys=False))
    result = subprocess.run(
        ["snakemake", "--cores", "2"], cwd=root, env=ENV, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-5000:]
    return root


def _record(root: Path, model: str, name: str) -> dict:
    return json.loads((root / f"results/metrics/{model}/{name}.json").read_text())


def test_zeroshot_records_on_coco_crops(run, shared_data):
    manifest = json.loads((run / "data/testsets/coco_objects/manifest.json").read_text())
    crops = expected_crops(shared_data)
    assert len(manifest["images"]) == sum(n for s, n in crops.items() if s != "animal")
    # every val class but the 9 animals
    assert len(manifest["classes"]) == 67 - 9 and "animal" not in manifest["superclasses"]
    for model in MODELS:
        record = _record(run, model, "zeroshot-coco_objects")
        assert record["task"] == "zeroshot" and record["dataset"]["n_images"] == len(
            manifest["images"]
        )
        metrics = record["metrics"]
        assert 0 <= metrics["top1"] <= metrics["top5"] <= 100
        per_class = json.loads(
            (run / f"results/metrics/{model}/zeroshot-coco_objects.json.json").read_text()
        )
        counts = per_class["n_images"]
        # top-1 is the image-weighted mean of the per-class accuracies
        weighted = sum(
            acc * n for acc, n in zip(per_class["top1"], counts) if acc is not None
        ) / sum(counts)
        assert weighted == pytest.approx(metrics["top1"], abs=1e-6)


def test_corruption_and_typographic_records(run):
    for model in MODELS:
        clean = _record(run, model, "zeroshot-coco_objects")["metrics"]["top1"]
        for name in CORRUPTIONS:
            for severity in SEVERITIES:
                record = _record(run, model, f"corruption-{name}-s{severity}")
                # `images`: what was corrupted (the clean set's kind, and the size when it is not
                # ImageNet-C's 224): not ImageNet val, so no mCE against AlexNet's published errors
                assert record["condition"] == {
                    "corruption": name,
                    "severity": severity,
                    "images": "coco-objects at 96 px",
                }
                assert record["metrics"]["top1_clean"] == clean
                assert record["metrics"]["drop"] == pytest.approx(clean - record["metrics"]["top1"])
        typo = _record(run, model, "typographic")
        assert (
            typo["condition"] == {"attack": "typographic"}
            and 0 <= typo["metrics"]["attack_success"] <= 100
        )
    attacked = json.loads((run / "data/typographic/coco_objects/manifest.json").read_text())[
        "images"
    ]
    assert all(entry["written"] != entry["label"] for entry in attacked)


def test_robustness_tables(run):
    corruptions = pd.read_csv(run / "results/robustness/corruptions.csv").set_index("model")
    # the baseline against itself
    assert corruptions.loc["vit-s-32-random", "mCE"] == pytest.approx(100.0)
    # corruptions of COCO crops: no mCE against AlexNet's published errors, the reason instead
    assert corruptions["mCE_alexnet"].isna().all()
    assert (
        corruptions["alexnet_note"].str.contains("corruptions of a coco-objects at 96 px set").all()
    )
    for model in MODELS:
        top1 = [
            _record(run, model, f"corruption-{c}-s{s}")["metrics"]["top1"]
            for c in CORRUPTIONS
            for s in SEVERITIES
        ]
        assert corruptions.loc[model, "mCA"] == pytest.approx(sum(top1) / len(top1), abs=1e-3)
    effective = pd.read_csv(run / "results/robustness/effective.csv")
    assert {"corruptions (mean)", "typographic attack"} <= set(effective["shift"])
    note = json.loads((run / "results/robustness/robustness.json").read_text())["note"]
    for model in MODELS:  # DVC metrics: a flat file per model, the table's numbers
        score = json.loads((run / f"results/robustness/scores/{model}.json").read_text())
        assert score["mCA"] == pytest.approx(corruptions.loc[model, "mCA"], abs=1e-4)
    if (
        note is None
    ):  # two models: the fitted line passes through both, so their effective robustness is 0
        assert effective["effective_robustness"].abs().max() < 1e-6
    else:  # random-init models at one in-distribution accuracy: no line, said so, ER left empty
        assert "no baseline line" in note and effective["effective_robustness"].isna().all()
    rr = effective["shifted_accuracy"] - effective["id_accuracy"]
    assert (effective["relative_robustness"] - rr).abs().max() < 2e-6  # the CSV keeps 6 decimals
    for figure in (
        "zeroshot_accuracy",
        "corruption_heatmap",
        "corruption_severity",
        "typographic_attack",
        "effective_robustness",
    ):
        assert (run / f"results/figures/{figure}.png").stat().st_size > 10_000


def test_animals_are_out_of_distribution_and_calibration_covers_every_set(run, shared_data):
    from vlstress.record import read_records

    animals = json.loads((run / "data/ood/animals/manifest.json").read_text())
    n_animals = expected_crops(shared_data)["animal"]
    assert set(animals["superclasses"]) == {"animal"} and len(animals["images"]) == n_animals
    for model in MODELS:
        ood = read_records(run / f"results/metrics/{model}/ood-animals.json")
        assert {r.condition["score"] for r in ood} == {"mcm", "msp", "max_logit", "energy"}
        assert all(
            r.dataset["n_ood_images"] == n_animals and 0 <= r.metrics["auroc"] <= 100 for r in ood
        )
        calibration = read_records(run / f"results/metrics/{model}/calibration.json")
        # held-out ID, corruptions, typographic
        assert len(calibration) == 1 + len(CORRUPTIONS) * len(SEVERITIES) + 1
        held_out = calibration[0]
        n_id = sum(n for s, n in expected_crops(shared_data).items() if s != "animal")
        assert held_out.condition == {"set": "coco_objects", "split": "held-out"}
        assert (
            held_out.dataset["n_images"] == n_id - held_out.metrics["n_fit"]
            and abs(held_out.metrics["n_fit"] - n_id / 2) <= 1
        )
        # one T, carried unchanged to every shift
        assert len({r.metrics["temperature"] for r in calibration}) == 1
    for figure in ("calibration_ece", "ood_auroc"):
        assert (run / f"results/figures/{figure}.png").stat().st_size > 10_000
