"""Editing image_variants lams/seeds in params.yaml reruns only image stages under DVC (slow: minutes).

In a fresh copy of the repository (4 demo photos, one small random-init model, one image
variant), `dvc repro evaluate_image` builds the image branch and everything it needs
(download, prepare, embed_images, embed_texts). Then adding a lam, and adding a seed,
must only create/run image_variants, embed_image_variants and evaluate_image stages of the
new (method, lam, seed) combinations: the existing variant and everything upstream stay.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import copy_repo, finetune_off, zeroshot_off

pytestmark = pytest.mark.slow
pytest.importorskip("dvc")

BIN = str(Path(sys.executable).parent)
ENV = {**os.environ, "PATH": BIN + os.pathsep + os.environ.get("PATH", ""), "PYTHONUNBUFFERED": "1"}
MODEL = "vit-s-32-random"
IMAGE_STAGES = ("image_variants", "embed_image_variants", "evaluate_image")
GATE = "check_params"  # rechecks every params edit; reruns nothing downstream by itself
UPSTREAM = {GATE, "download", "prepare", f"model_card@{MODEL}", f"embed_images@{MODEL}", f"embed_texts@{MODEL}"}


def sh(*cmd: str, cwd: Path) -> str:
    result = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True)
    if result.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed ({result.returncode}):\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}")
    return result.stdout + result.stderr


def changed(root: Path) -> set[str]:
    return set(re.findall(r"^(\S+):$", sh("dvc", "status", cwd=root), flags=re.M))


def ran(log: str) -> set[str]:
    return set(re.findall(r"Running stage '([^']+)'", log))


def image_stages(model: str, method: str, lam: str, seed: int) -> set[str]:
    return {
        f"image_variants@{method}-{lam}-{seed}",
        f"embed_image_variants@{model}-{method}-{lam}-{seed}",
        f"evaluate_image@{model}-{method}-{lam}-{seed}",
    }


def edit_params(root: Path, **image_variants) -> None:
    path = root / "params.yaml"
    params = yaml.safe_load(path.read_text())
    params["image_variants"].update(image_variants)
    path.write_text(yaml.safe_dump(params, sort_keys=False))


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = copy_repo(tmp_path_factory.mktemp("dvc_image") / "repo")
    params_path = root / "params.yaml"
    params = yaml.safe_load(params_path.read_text())
    params["dataset"]["max_images"] = 4
    params["models"] = {MODEL: {"arch": "ViT-S-32", "pretrained": None}}
    finetune_off(params)
    zeroshot_off(params)  # not what this test is about
    params["image_variants"].update(methods=["mix"], lams=[0.9], seeds=[1])
    params_path.write_text(yaml.safe_dump(params, sort_keys=False))
    sh("vlstress", "pipeline", "render", cwd=root)  # the zero-shot suites are off
    for top in ("data/raw", "data/prepared", "data/image_variants", "results"):
        shutil.rmtree(root / top, ignore_errors=True)
    (root / "dvc.lock").unlink(missing_ok=True)
    sh("git", "init", "-q", cwd=root)
    sh("git", "add", "-A", cwd=root)
    sh("git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "copy", cwd=root)
    log = sh("dvc", "repro", "evaluate_image", cwd=root)
    assert ran(log) == UPSTREAM | image_stages(MODEL, "mix", "0.9", 1), log
    return root


def test_adding_a_lam_reruns_only_the_new_image_stages(project):
    before = changed(project)
    assert not before & (UPSTREAM | image_stages(MODEL, "mix", "0.9", 1)), before
    edit_params(project, lams=[0.9, 0.5])
    after = changed(project) - {GATE}
    new = image_stages(MODEL, "mix", "0.5", 1)
    assert after - before == new, after - before
    assert not after & (UPSTREAM | image_stages(MODEL, "mix", "0.9", 1)), after
    log = sh("dvc", "repro", "evaluate_image", cwd=project)
    assert ran(log) == new | {GATE}, log
    record = json.loads((project / f"results/metrics/{MODEL}/image-mix-lam0.5-seed1.json").read_text())
    assert record["task"] == "image-stress" and record["condition"] == {"perturbation": "mix", "lam": 0.5, "seed": 1}
    assert (project / "data/image_variants/mix_lam0.5_seed1/images").is_dir()


def test_adding_a_seed_would_run_only_the_new_image_stages(project):
    before = changed(project)
    edit_params(project, lams=[0.9, 0.5], seeds=[1, 7])
    after = changed(project) - {GATE}
    new = image_stages(MODEL, "mix", "0.9", 7) | image_stages(MODEL, "mix", "0.5", 7)
    assert after - before == new, after - before
    assert not after & UPSTREAM, after
    # a dry run stops at the first stage whose input a real run would create, so dry-run
    # the first image stage only; `dvc status` above covers the embedding and evaluation
    log = sh("dvc", "repro", "--dry", "image_variants", cwd=project)
    assert ran(log) == {GATE, "image_variants@mix-0.9-7", "image_variants@mix-0.5-7"}, log
