"""Robust fine-tuning in the workflow (slow: a few minutes): Snakemake fine-tunes a small model on
the demo's training photos, the fine-tuned checkpoint becomes a model that every suite of the run
evaluates beside its base, the comparison table holds both, and DVC then has nothing to do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import committed_copy

pytestmark = pytest.mark.slow
pytest.importorskip("snakemake")
pytest.importorskip("dvc")

ENV = {
    **os.environ,
    "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
    "PYTHONUNBUFFERED": "1",
}
BASE, TUNED = "vit-s-32-random", "vit-s-32-random+sc"
LORA, WISE = "vit-s-32-random+standard", "vit-s-32-random+wise0_5"
CHECKPOINT = "results/finetune/sc/model.safetensors"
LORA_CHECKPOINT = "results/finetune/labelled/standard/model.safetensors"
# the demo's zero-shot classes: the standard variant's head is trained on them (synthetic images)
OBJECTS = ("camera", "cat", "cup of coffee", "motorcycle", "rocket")
WISE_CHECKPOINT = "results/finetune/wise/0.5/model.safetensors"


def sh(*cmd: str, cwd: Path) -> str:
    result = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True)
    assert result.returncode == 0, (
        f"{' '.join(cmd)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}"
    )
    return result.stdout + result.stderr


def labelled_images(folder: Path) -> Path:
    """Two synthetic images of each zero-shot class, in class folders (an imagefolder set)."""
    from PIL import Image

    for k, name in enumerate(OBJECTS):
        for i in range(2):
            path = folder / name / f"{i}.png"
            path.parent.mkdir(parents=True, exist_ok=True)
            Image.new("RGB", (64, 64), (40 * k, 200 - 30 * k, 90 + 60 * i)).save(path)
    return folder


def small_finetune(params: dict, labelled: Path) -> dict:
    """The text stress-test and zero-shot on 4 photos, a base model, its SC variant (2 steps),
    standard fine-tuning through LoRA adapters with a head of the zero-shot classes (on synthetic
    images of them), and WiSE-FT halfway between the base and the SC variant."""
    params["suites"] = {
        "rococo_text": True,
        "rococo_image": False,
        "zeroshot": True,
        "finetune": True,
    }
    params["dataset"]["max_images"] = 4
    params["models"] = {
        BASE: {"arch": "ViT-S-32-alt", "pretrained": None},
        TUNED: {"arch": "ViT-S-32-alt", "pretrained": CHECKPOINT},
        LORA: {"arch": "ViT-S-32-alt", "pretrained": LORA_CHECKPOINT},
        WISE: {"arch": "ViT-S-32-alt", "pretrained": WISE_CHECKPOINT},
    }
    sets = params["text_variants"]["sets"]
    params["text_variants"]["sets"] = {"same_concept": sets["same_concept"]}
    params["zeroshot"]["testsets"]["objects"]["max_per_class"] = 1
    params["zeroshot"]["robustness"]["mce_baseline"] = None
    params["finetune"].update(
        base={"slug": BASE, "arch": "ViT-S-32-alt", "pretrained": None},
        steps=2,
        batch_size=4,
        warmup=1,
        checkpoint_every=1,
        variants={
            "sc": {"w_sc": 1.0, "w_vc": 0.0, "lora": 0},
        },
        wise={"of": "sc", "alphas": [0.5]},
    )
    params["finetune"]["train"]["max_images"] = 4
    params["finetune"]["labelled"]["train"].update(kind="imagefolder", root=str(labelled))
    params["finetune"]["labelled"]["variants"] = {"standard": {"loss": "standard", "lora": 2}}
    return params


@pytest.fixture(scope="module")
def run(module_tmp) -> Path:
    labelled = labelled_images(module_tmp.mktemp("labelled"))
    root = committed_copy(
        module_tmp.mktemp("finetune") / "repo", lambda params: small_finetune(params, labelled)
    )
    sh("snakemake", "--cores", "2", cwd=root)
    return root


def test_the_fine_tuned_checkpoint_is_a_model_evaluated_beside_its_base(run):
    card = json.loads((run / f"results/models/{TUNED}.json").read_text())["model"]
    assert (
        card["weights"] == "checkpoint"
        and card["pretrained"] == CHECKPOINT
        and len(card["checkpoint_sha256"]) == 64
    )
    sidecar = json.loads((run / f"{CHECKPOINT}.json").read_text())
    assert (
        sidecar["base"]["slug"] == BASE
        and sidecar["training"]["w_sc"] == 1.0
        and sidecar["training"]["steps"] == 2
    )
    assert sidecar["training"]["images"] == 4  # the training photos, none of them a test photo
    for model in (BASE, TUNED):
        for record in ("original", "text-same_concept", "zeroshot-objects"):
            assert (run / f"results/metrics/{model}/{record}.json").is_file(), (model, record)
    log = (run / "results/finetune/sc/log.csv").read_text().splitlines()
    assert log[0].startswith("step,lr,clip,sc,vc,total") and len(log) == 3


def test_standard_through_lora_and_wise_ft_variants_are_models_too(run):
    import torch
    from safetensors.torch import load_file

    lora = json.loads((run / f"{LORA_CHECKPOINT}.json").read_text())
    assert lora["training"]["lora_rank"] == 2 and lora["training"]["lora_tower"] == "image"
    assert (lora["training"]["loss"], lora["training"]["images"]) == ("standard", 10)
    assert "peft" in lora["provenance"]["packages"]
    wise = json.loads((run / f"{WISE_CHECKPOINT}.json").read_text())
    assert wise["alpha"] == 0.5 and wise["variant"] == "sc" and wise["base"]["slug"] == BASE
    tuned, adapted, half = (
        load_file(str(run / path)) for path in (CHECKPOINT, LORA_CHECKPOINT, WISE_CHECKPOINT)
    )
    # LoRA trained only the image tower's MLPs (and the head), so its text tower is the base's;
    # the SC variant trained every weight; WiSE-FT at 0.5 is their mean
    key = "text_projection"
    assert not torch.equal(adapted[key], tuned[key])
    torch.testing.assert_close(half[key], (adapted[key] + tuned[key]) / 2)
    # the base, recovered from the mean: LoRA moved the image MLPs and nothing else
    base = {k: 2 * v.double() - tuned[k].double() for k, v in half.items() if v.is_floating_point()}
    moved = {k for k, v in base.items() if not torch.allclose(adapted[k].double(), v, atol=1e-5)}
    assert moved and all(k.startswith("visual.") and ".mlp.c_" in k for k in moved), moved
    for model in (LORA, WISE):
        for record in ("original", "zeroshot-objects"):
            assert (run / f"results/metrics/{model}/{record}.json").is_file(), (model, record)
    # standard fine-tuning's head covers the zero-shot classes: it is the model's classifier
    import numpy as np
    from safetensors import safe_open

    with safe_open(str(run / LORA_CHECKPOINT), framework="pt") as handle:
        classes = json.loads(handle.metadata()["vlstress_head_classes"])
    assert sorted(classes) == list(OBJECTS)
    folder = run / f"results/embeddings/{LORA}/classifiers"
    meta = json.loads((folder / "objects.npy.json").read_text())
    assert (meta["weights"], meta["logit_scale"]) == ("fine-tuned head", 1.0)
    rows = [classes.index(name) for name in meta["classes"]]
    head = adapted["vlstress_head.weight"].numpy()[rows]
    np.testing.assert_array_equal(np.load(folder / "objects.npy"), head)
    card = json.loads((run / f"results/models/{LORA}.json").read_text())["model"]
    assert card["head_classes"] == 5


def test_the_comparison_table_and_dvc_has_nothing_to_do(run):
    import pandas as pd

    table = (run / "results/finetune/comparison.md").read_text()
    assert "Change against the base" in table and "text same_concept false R@1" in table
    values = pd.read_csv(run / "results/finetune/comparison.csv")
    assert list(values["model"]) == [BASE, TUNED, LORA, WISE]
    assert list(values["method"]) == ["base", "SC/VC", "standard + LoRA", "WiSE-FT"]
    assert list(values["variant"]) == ["base", "sc", "standard", "wise 0.5"]
    summary = pd.read_csv(run / "results/summary_agg.csv")
    top1 = summary[(summary["task"] == "zeroshot") & (summary["metric"] == "top1")].set_index(
        "model"
    )["mean"]
    assert values.set_index("model")["zero-shot objects top-1"].to_dict() == pytest.approx(
        top1.to_dict()
    )
    assert "Data and pipelines are up to date" in sh("dvc", "status", cwd=run)
    # `dvc commit` after the run re-links the checkpoint: its mtime must not make Snakemake rerun
    # what was built from it
    assert "Nothing to be done" in sh("snakemake", "-n", cwd=run)
