"""Files outside the repository that a step reads are inputs of that step in both front ends (slow:
a minute or two).

A coco-dir dataset (images folder + captions json), a local checkpoint and the folder
of official RoCOCO sets live outside the checkout. After a build, editing any of them
makes `snakemake -n` and `dvc status` name exactly the steps that read it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image

from conftest import copy_repo, finetune_off

pytestmark = pytest.mark.slow
pytest.importorskip("snakemake")
pytest.importorskip("dvc")

ENV = {
    **os.environ,
    "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
}
MODEL = "rn50-local"
TARGETS = [f"results/models/{MODEL}.json", "data/text_variants/danger.json"]
CAPTIONS = [
    ["a red square on a table", "a square of red paint"],
    ["a blue circle in the sky", "a round blue shape"],
    ["a green line on the road", "a thin green stripe"],
]


def sh(*cmd: str, cwd: Path) -> str:
    result = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True)
    if result.returncode != 0:
        raise AssertionError(
            f"{' '.join(cmd)} failed ({result.returncode}):\n"
            f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
        )
    return result.stdout + result.stderr


def write_image(path: Path, seed: int) -> None:
    pixels = np.random.default_rng(seed).integers(0, 255, (48, 64, 3), dtype=np.uint8)
    Image.fromarray(pixels).save(path, format="JPEG", quality=90)


def planned(root: Path) -> set[str]:
    out = sh("snakemake", "-n", *TARGETS, cwd=root)
    return set(re.findall(r"^(?:local)?rule (\w+):", out, flags=re.M)) - {"all"}


def changed(root: Path) -> set[str]:
    stages = set(
        re.findall(r"^(\S+):$", sh("dvc", "status", *TARGETS_STAGES, cwd=root), flags=re.M)
    )
    return {re.split(r"[@-]", stage, maxsplit=1)[0] for stage in stages}


# a model with a checkpoint of its own: its card is a plain stage of its own
TARGETS_STAGES = [f"model_card-{MODEL}", "text_variants@danger"]


@pytest.fixture(scope="module")
def outside(module_tmp) -> Path:
    """A coco-dir dataset, a checkpoint and official sets, outside the checkout."""
    root = module_tmp.mktemp("outside")
    (root / "images").mkdir()
    images, annotations = [], []
    for i, captions in enumerate(CAPTIONS):
        write_image(root / "images" / f"{i + 1:012d}.jpg", i)
        images.append({"id": i + 1, "file_name": f"{i + 1:012d}.jpg"})
        annotations += [
            {"id": 10 * (i + 1) + k, "image_id": i + 1, "caption": c}
            for k, c in enumerate(captions)
        ]
    (root / "captions.json").write_text(json.dumps({"images": images, "annotations": annotations}))
    # a model card checks and pins it without loading it
    (root / "ckpt.pt").write_bytes(b"weights v1")
    (root / "official").mkdir()
    danger = [
        {
            "image": f"val2014/COCO_val2014_{i + 1:012d}.jpg",
            "caption": [*c, *(x.replace("a ", "a weapon ", 1) for x in c)],
        }
        for i, c in enumerate(CAPTIONS)
    ]
    (root / "official" / "danger.json").write_text(json.dumps(danger))
    return root


@pytest.fixture(scope="module")
def project(module_tmp, outside) -> Path:
    root = copy_repo(module_tmp.mktemp("external") / "repo")
    params_path = root / "params.yaml"
    params = yaml.safe_load(params_path.read_text())
    params["suites"] = {"rococo_text": True}
    params["dataset"].update(
        name="outside",
        kind="coco-dir",
        images=str(outside / "images"),
        captions=str(outside / "captions.json"),
    )
    params["models"] = {MODEL: {"arch": "RN50", "pretrained": str(outside / "ckpt.pt")}}
    finetune_off(params)
    params["text_variants"].update(source="official", official_dir=str(outside / "official"))
    params["text_variants"]["sets"] = {"danger": params["text_variants"]["sets"]["danger"]}
    params_path.write_text(yaml.safe_dump(params, sort_keys=False))
    sh("vlstress", "pipeline", "render", cwd=root)
    (root / "dvc.lock").unlink(missing_ok=True)
    sh("git", "init", "-q", cwd=root)
    sh("snakemake", "--cores", "2", *TARGETS, cwd=root)  # records its work in dvc.lock too
    return root


def test_external_paths_are_dependencies_in_dvc_yaml(project, outside):
    text = (project / "dvc.yaml").read_text()
    for path in ("images", "captions.json", "ckpt.pt", "official"):
        assert f"- {outside / path}\n" in text, path


def test_after_a_build_both_front_ends_have_nothing_to_do(project):
    assert planned(project) == set()
    assert changed(project) == set()


def test_new_times_on_the_same_bytes_rerun_nothing(project, outside):
    """A checkpoint, an image and the captions touched, then their times rounded down to the
    second (a copy by tar or a backup): the same bytes, so neither front end reruns anything.
    Snakemake compared the checkpoint's time with its outputs' and fingerprinted the files by
    their times."""
    touched = [outside / "ckpt.pt", outside / "images" / "000000000001.jpg"]
    touched.append(outside / "captions.json")
    for path in touched:
        os.utime(path)  # now: newer than every output built from it
    assert planned(project) == set()
    for path in touched:
        seconds = path.stat().st_mtime_ns // 10**9 * 10**9
        os.utime(path, ns=(seconds, seconds))
    assert planned(project) == set()
    assert changed(project) == set()


def test_an_edited_checkpoint_reruns_its_model_card_only(project, outside):
    (outside / "ckpt.pt").write_bytes(b"weights v2")
    assert planned(project) == {"model_card"}
    assert changed(project) == {"model_card"}


def test_an_edited_official_set_reruns_the_set(project, outside):
    path = outside / "official" / "danger.json"
    path.write_text(path.read_text().replace("a weapon", "a criminal"))
    assert planned(project) == {"model_card", "text_variants"}
    assert changed(project) == {"model_card", "text_variants"}


def test_an_image_replaced_in_place_reruns_the_dataset(project, outside):
    assert "download" not in planned(project)
    # same name, new content: no folder mtime change
    write_image(outside / "images" / "000000000002.jpg", 99)
    assert "download" in planned(project) and "download" in changed_all(project)


def test_edited_captions_rerun_the_dataset(project, outside):
    sh("snakemake", "--cores", "2", *TARGETS, cwd=project)
    assert planned(project) == set()
    path = outside / "captions.json"
    path.write_text(path.read_text().replace("a red square", "a red cube"))
    assert "download" in planned(project) and "download" in changed_all(project)


def changed_all(root: Path) -> set[str]:
    return {
        s.split("@")[0] for s in re.findall(r"^(\S+):$", sh("dvc", "status", cwd=root), flags=re.M)
    }
