"""The visual-factors suite end to end (slow tier): stand-in images named as
real ImageNet val files in their wnid folders, read by the `imagenet` test-set kind, with a
stand-in NINCO folder as the OOD set against them (kind `ninco`), two tiny CLIPs, built by
Snakemake in a fresh copy. Checks what must hold whatever the weights: each model's records cover
the 16 factors on exactly the stand-in images, the error ratios follow from the records' own
accuracies, the step across models runs (two models: its line is undefined, and says so), NINCO's
46 classes are scored as OOD against ImageNet's 1000 (no class shared), neither front end has
anything left to do, and DVC rerunning the suite's steps writes the same bytes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from conftest import (
    TINY_CLIP,
    committed_copy,
    dvc_reruns_to_the_same_bytes,
    finetune_off,
    locked_stages,
    run_ok,
    tool_env,
)

pytestmark = pytest.mark.slow
pytest.importorskip("snakemake")
pytest.importorskip("dvc")

N_IMAGES = 20
MODELS = ("tiny", "tiny-wide")


@pytest.fixture(scope="module")
def val(module_tmp) -> tuple[Path, list[str]]:
    """A stand-in ImageNet val folder: the first N annotated files, tiny JPEGs."""
    from vlstress.suites.visual_factors.factors import load_table
    from vlstress.testsets.labelmaps import imagenet_wnids

    root = module_tmp.mktemp("imagenet") / "val"
    chosen = load_table("top", True).sort_values("file_name").head(N_IMAGES)
    for i, (_, row) in enumerate(chosen.iterrows()):
        path = root / imagenet_wnids()[row["class"]] / row["file_name"]
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (16, 16), (i * 11 % 256, 60, 200 - i)).save(path, format="JPEG")
    return root, list(chosen["file_name"])


@pytest.fixture(scope="module")
def ninco(module_tmp) -> Path:
    """A stand-in NINCO_all folder: one tiny image in each of its 64 class folders."""
    from vlstress.testsets.ood_kinds import ninco_classes

    root = module_tmp.mktemp("ninco") / "NINCO_all"
    for i, (folder, (_, status)) in enumerate(sorted(ninco_classes().items())):
        if status in ("1", "2"):
            path = root / "NINCO_OOD_classes" / folder / f"{folder}_000.jpg"
            path.parent.mkdir(parents=True, exist_ok=True)
            Image.new("RGB", (16, 16), (30, i * 3 % 256, 90)).save(path, format="JPEG")
    return root


@pytest.fixture(scope="module")
def env(module_tmp) -> dict[str, str]:
    wide = {**TINY_CLIP, "vision_cfg": {**TINY_CLIP["vision_cfg"], "width": 96}}
    return tool_env(module_tmp.mktemp("model-configs"), {"vlstress-tiny-wide": wide})


@pytest.fixture(scope="module")
def built(module_tmp, env, val, ninco) -> Path:
    root, _ = val

    def small(params: dict) -> dict:
        finetune_off(params)
        params["suites"] = {name: False for name in params["suites"]} | {
            "zeroshot": True,
            "visual_factors": True,
            "ood": True,
        }
        params["dataset"]["max_images"] = 3
        params["models"] = {
            "tiny": {"arch": "vlstress-tiny", "pretrained": None},
            "tiny-wide": {"arch": "vlstress-tiny-wide", "pretrained": None},
        }
        params["embed"].update(threads=1, workers=0)
        entry = dict(params["zeroshot"]["testsets"]["objects"])
        entry.update(kind="imagenet", root=str(root), keep=None, drop=None)
        # the demo's ImageNet map names its `objects` set, which this replaces
        params["zeroshot"].update(
            testsets={"imagenet": entry}, templates="single", imagenet_maps=None
        )
        params["zeroshot"]["in_distribution"] = "imagenet"
        params["zeroshot"]["robustness"]["mce_baseline"] = None
        params["ood"]["in_distribution"] = "imagenet"
        params["ood"]["sets"] = {"ninco": {**entry, "kind": "ninco", "root": str(ninco)}}
        params["visual_factors"] = {
            "testset": "imagenet",
            "annotations": "top",
            "filter_prototypes": True,
            "complete": False,
            "transform": "linear",
        }
        return params

    root = committed_copy(module_tmp.mktemp("smk") / "repo", small)
    run_ok("snakemake", "--cores", "2", cwd=root, env=env)
    return root


def records(root: Path, model: str) -> list[dict]:
    return json.loads((root / f"results/metrics/{model}/visual_factors.json").read_text())


def test_records_cover_the_factors_of_the_stand_in_images(built, val):
    from vlstress.suites.visual_factors.factors import factor_names

    _, files = val
    for model in MODELS:
        found = records(built, model)
        assert [r["condition"]["factor"] for r in found] == ["all", *factor_names()]
        overall = found[0]["metrics"]
        assert overall["n_images"] == N_IMAGES and found[0]["dataset"]["n_images"] == N_IMAGES
        assert sum(r["metrics"]["n_images"] for r in found[1:]) == N_IMAGES  # one top factor each
        for r in found[1:]:
            m = r["metrics"]
            if m["n_images"] and overall["top1"] < 100:
                expected = (100 - m["top1"]) / (100 - overall["top1"])
                assert m["error_ratio"] == pytest.approx(expected)
        predictions = json.loads(
            (built / f"results/metrics/{model}/visual_factors.json.json").read_text()
        )
        assert sorted(predictions["file_name"]) == sorted(files)
        assert found[0]["provenance"]["packages"]["imagenet-x"] == "0.0.7"


def test_the_report_and_dvc_rerunning_the_suite_writes_the_same_bytes(built, env):
    table = (built / "results/visual_factors/table.md").read_text()
    assert "error ratio" in table and "fewer than 3 models" in table  # two models: no line
    assert (built / "results/figures/visual_factors.png").is_file()
    ood = json.loads((built / "results/metrics/tiny/ood-ninco.json").read_text())
    assert {r["dataset"]["n_ood_images"] for r in ood} == {46}  # the benchmark's classes
    assert all(0 <= r["metrics"]["auroc"] <= 100 for r in ood)
    assert "Nothing to be done" in run_ok("snakemake", "-n", cwd=built, env=env)
    assert "up to date" in run_ok("dvc", "status", cwd=built, env=env)
    steps = locked_stages(built, "visual_factors", "ood_detect")
    assert len(steps) == 2 * len(MODELS), steps
    dvc_reruns_to_the_same_bytes(built, steps, env)
