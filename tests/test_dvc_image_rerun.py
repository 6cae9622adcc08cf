"""Editing image_variants lams/seeds in params.yaml reruns only what it must under DVC (slow:
minutes).

In a fresh copy of the repository (4 demo photos, one small random-init model, one image
variant, the text stress-test off), `dvc repro evaluate_image` builds the image branch and
everything it needs (download, prepare, the model card, the model's one embedding job).
Then adding a lam, and adding a seed (and rendering dvc.yaml: the model's one evaluation job
lists a record per variant, so the gate refuses a stale dvc.yaml), must create/run the
image_variants stages of the new (method, lam, seed) combinations, the model's embedding job,
which embeds the new variant only and reuses every unchanged set byte for byte, and the model's
evaluation job; everything upstream stays, and the records of the existing variant do not change.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import copy_repo, finetune_off, ran_stages, stale_stages, zeroshot_off

pytestmark = pytest.mark.slow
pytest.importorskip("dvc")

BIN = str(Path(sys.executable).parent)
ENV = {**os.environ, "PATH": BIN + os.pathsep + os.environ.get("PATH", ""), "PYTHONUNBUFFERED": "1"}
MODEL = "vit-s-32-random"
GATE = "check_params"  # rechecks every params edit; reruns nothing downstream by itself
UPSTREAM = {GATE, "download", "prepare", f"model_card@{MODEL}"}
EMBED = f"embed_retrieval@{MODEL}"  # every set of the model in one job: reruns when a set is added
EVALUATE = f"evaluate_image@{MODEL}"  # every variant of the model in one job: reruns with EMBED
RECORD = f"results/metrics/{MODEL}/image-mix-lam0.9-seed1.json"


def sh(*cmd: str, cwd: Path) -> str:
    result = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True)
    if result.returncode != 0:
        raise AssertionError(
            f"{' '.join(cmd)} failed ({result.returncode}):\n"
            f"{result.stdout[-3000:]}\n{result.stderr[-5000:]}"
        )
    return result.stdout + result.stderr


def changed(root: Path) -> set[str]:
    return stale_stages(sh("dvc", "status", cwd=root))


def ran(log: str) -> set[str]:
    """The stages a `dvc repro` ran, but the code stamps (`code_<stage>`: they hash source files,
    and run only on a first build or a code edit)."""
    return {stage for stage in ran_stages(log) if not stage.startswith("code_")}


def image_stages(method: str, lam: str, seed: int) -> set[str]:
    return {f"image_variants@{method}-{lam}-{seed}"}


def edit_params(root: Path, **image_variants) -> None:
    """The edit, refused by the pipeline check until dvc.yaml is rendered again."""
    path = root / "params.yaml"
    params = yaml.safe_load(path.read_text())
    params["image_variants"].update(image_variants)
    path.write_text(yaml.safe_dump(params, sort_keys=False))
    stale = subprocess.run(
        ["vlstress", "pipeline", "check"], cwd=root, env=ENV, capture_output=True, text=True
    )
    assert stale.returncode != 0 and "vlstress pipeline render" in stale.stderr, stale.stderr
    sh("vlstress", "pipeline", "render", cwd=root)


@pytest.fixture(scope="module")
def project(module_tmp) -> Path:
    root = copy_repo(module_tmp.mktemp("dvc_image") / "repo")
    params_path = root / "params.yaml"
    params = yaml.safe_load(params_path.read_text())
    params["dataset"]["max_images"] = 4
    params["models"] = {MODEL: {"arch": "ViT-S-32", "pretrained": None}}
    finetune_off(params)
    zeroshot_off(params)  # not what this test is about
    params["suites"]["rococo_text"] = False
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
    assert ran(log) == UPSTREAM | {EMBED, EVALUATE} | image_stages("mix", "0.9", 1), log
    assert "0 reused" in log
    return root


def test_adding_a_lam_embeds_only_the_new_variant(project):
    before = changed(project)
    assert not before & (UPSTREAM | {EMBED, EVALUATE} | image_stages("mix", "0.9", 1)), before
    record = (project / RECORD).read_bytes()
    embeddings = project / f"results/embeddings/{MODEL}/retrieval"
    kept = {
        name: (embeddings / name).read_bytes()
        for name in ("images.npy", "texts.npy", "image_variants/mix_lam0.9_seed1.npy")
    }
    edit_params(project, lams=[0.9, 0.5])
    after = changed(project) - {GATE}
    new = image_stages("mix", "0.5", 1)
    assert after - before == new | {EMBED, EVALUATE}, after - before
    assert not after & UPSTREAM, after
    log = sh("dvc", "repro", "evaluate_image", cwd=project)
    assert ran(log) == new | {GATE, EMBED, EVALUATE}, log
    assert f"{MODEL}: 1 set(s) embedded, 3 reused" in log, log
    assert {name: (embeddings / name).read_bytes() for name in kept} == kept
    assert (project / RECORD).read_bytes() == record
    new_record = json.loads(
        (project / f"results/metrics/{MODEL}/image-mix-lam0.5-seed1.json").read_text()
    )
    assert new_record["task"] == "image-stress" and new_record["condition"] == {
        "perturbation": "mix",
        "lam": 0.5,
        "seed": 1,
    }
    assert (project / "data/image_variants/mix_lam0.5_seed1/images").is_dir()
    assert "up to date" in sh("dvc", "status", "evaluate_image", cwd=project)


def test_adding_a_seed_would_run_only_the_new_image_stages(project):
    before = changed(project)
    edit_params(project, lams=[0.9, 0.5], seeds=[1, 7])
    after = changed(project) - {GATE}
    new = image_stages("mix", "0.9", 7) | image_stages("mix", "0.5", 7)
    assert after - before == new | {EMBED, EVALUATE}, after - before
    assert not after & UPSTREAM, after
    # a dry run stops at the first stage whose input a real run would create, so dry-run
    # the first image stage only; `dvc status` above covers the embedding and evaluation
    log = sh("dvc", "repro", "--dry", "image_variants", cwd=project)
    assert ran(log) == {GATE, "image_variants@mix-0.9-7", "image_variants@mix-0.5-7"}, log
