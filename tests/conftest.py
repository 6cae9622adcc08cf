"""Shared fixtures. Real data lives in ../shared/data beside the checkout; tests that need it skip
without it."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("VLSTRESS_SHARED_DATA", REPO.parent / "shared" / "data"))


# The modules that take minutes (they build workflows), slowest first, as measured in a full run
# on 2 cores: pytest-xdist hands them out before the quick modules, which then fill the other worker
# (`make test` passes --no-loadscope-reorder: by default xdist orders files by number of tests, and
# the slow modules, with few tests each, came last and ran one after another on one worker).
SLOWEST_FIRST = (
    "test_workflow.py",
    "test_cpu_kernels.py",
    "test_slurm.py",
    "test_workflow_finetune.py",
    "test_prompts_workflow.py",
    "test_visual_factors_workflow.py",
    "test_workflow_edits.py",
    "test_workflow_zeroshot.py",
    "test_pipeline.py",
    "test_hub.py",
    "test_video_workflow.py",
    "test_runs.py",
    "test_figures.py",
    "test_exp_run.py",
    "test_dvc_ssh.py",
    "test_finetune_steps.py",
    "test_workflow_coco_mini.py",
    "test_external_inputs.py",
    "test_dvc_image_rerun.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: place for place, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: file order kept


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not (SHARED_DATA / "coco-mini").is_dir() or not (SHARED_DATA / "rococo").is_dir():
        pytest.skip(f"shared real data not found at {SHARED_DATA}")
    return SHARED_DATA


NLTK_DATA = Path(os.environ.get("VLSTRESS_NLTK_DATA", REPO / "data" / "nltk_data"))


@pytest.fixture(scope="session")
def nltk_data() -> Path:
    """The project's WordNet folder (`vlstress nlp-data`, run by the install); skip when absent."""
    from vlstress.suites.rococo_text.nlp import is_complete, wordnet_folder

    if not is_complete(wordnet_folder(NLTK_DATA)):
        pytest.skip(
            f"WordNet not installed in {NLTK_DATA}: run `vlstress nlp-data --out {NLTK_DATA}`"
        )
    return NLTK_DATA


class ModuleTemp:
    """`tmp_path_factory` for one test module. Its folders go when the module's tests are done:
    the workflow tests' copies of the repository take hundreds of MB each and, held until the
    session ends, fill a CI machine's disk. A module with a failed test keeps them to look at."""

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        self._factory = factory
        self.made: list[Path] = []

    def mktemp(self, basename: str) -> Path:
        path = self._factory.mktemp(basename)
        self.made.append(path)
        return path


@pytest.fixture(scope="module")
def module_tmp(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest):
    scratch = ModuleTemp(tmp_path_factory)
    failed_before = request.session.testsfailed
    yield scratch
    if request.session.testsfailed == failed_before:
        for path in scratch.made:
            shutil.rmtree(path, ignore_errors=True)


TINY_CLIP = {
    "embed_dim": 32,
    "vision_cfg": {"image_size": 32, "layers": 1, "width": 64, "patch_size": 16, "head_width": 32},
    "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 2},
}


@pytest.fixture(scope="session")
def tiny_arch(tmp_path_factory) -> str:
    """A tiny CLIP registered with open_clip in this process: loading and encoding take
    milliseconds."""
    import open_clip

    folder = tmp_path_factory.mktemp("model-configs")
    (folder / "vlstress-tiny.json").write_text(json.dumps(TINY_CLIP))
    open_clip.add_model_config(folder)
    return "vlstress-tiny"


def tool_env(configs: Path, extra: dict[str, dict] | None = None) -> dict[str, str]:
    """The environment of a workflow run in subprocesses: this interpreter's tools first on PATH,
    and the tiny CLIP (plus `extra`, name -> open_clip config) registered from the folder
    `configs` through VLSTRESS_MODEL_CONFIGS."""
    for name, config in {"vlstress-tiny": TINY_CLIP, **(extra or {})}.items():
        (configs / f"{name}.json").write_text(json.dumps(config))
    path = str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")
    return {**os.environ, "PATH": path, "VLSTRESS_MODEL_CONFIGS": str(configs)}


def run_ok(*cmd: str, cwd: Path, env: dict[str, str]) -> str:
    """stdout + stderr of a command (snakemake, dvc, ...) that must succeed; its output's tails
    in the failure."""
    result = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    assert result.returncode == 0, (
        f"{' '.join(cmd)}:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    return result.stdout + result.stderr


def run_cli(*args: str, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess:
    """Run `vlstress ...` as a user would (a subprocess of this interpreter)."""
    result = subprocess.run(
        [sys.executable, "-m", "vlstress", *args], cwd=cwd, capture_output=True, text=True
    )
    if check and result.returncode != 0:
        raise AssertionError(
            f"vlstress {' '.join(args)} failed ({result.returncode}):\n{result.stderr}"
        )
    return result


def copy_repo(dest: Path) -> Path:
    """A fresh copy of the tracked files of this checkout (a stand-in for a clone)."""
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True
    ).stdout.split(b"\0")
    for name in filter(None, files):
        src = REPO / name.decode()
        if src.is_file():
            target = dest / name.decode()
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)
    return dest


def committed_copy(dest: Path, edit: Callable[[dict], dict]) -> Path:
    """A copy of the repository with edited params and dvc.yaml rendered for them, no results,
    committed as a fresh clone would be (the tracked results of the full demo are not this
    run's)."""
    import yaml

    root = copy_repo(dest)
    params_path = root / "params.yaml"
    params_path.write_text(
        yaml.safe_dump(edit(yaml.safe_load(params_path.read_text())), sort_keys=False)
    )
    run_cli("pipeline", "render", cwd=root)
    for top in ("data", "results"):
        for path in (root / top).rglob("*"):
            if path.is_file() and path.name != ".gitignore":
                path.unlink()
    (root / "dvc.lock").unlink(missing_ok=True)
    for cmd in (
        ["init", "-q"],
        ["add", "-A"],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "copy"],
    ):
        subprocess.run(["git", *cmd], cwd=root, capture_output=True, check=True)
    return root


OUTPUT_ROOTS = ("data", "results")
NOT_OUTPUTS = ("data/weights", "data/downloads")  # caches, not workflow outputs
NOT_DATA = (".gitignore", ".snakemake_timestamp")  # git's and Snakemake's bookkeeping


def output_digests(root: Path) -> dict[str, str]:
    """sha256 of every workflow output of a project (data/ and results/, caches left out)."""
    found = {}
    for top in OUTPUT_ROOTS:
        for path in sorted((root / top).rglob("*")):
            name = str(path.relative_to(root))
            if path.is_file() and path.name not in NOT_DATA and not name.startswith(NOT_OUTPUTS):
                found[name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def ran_stages(log: str) -> set[str]:
    """The stages a `dvc repro` log says it ran."""
    return set(re.findall(r"Running stage '([^']+)'", log))


def stale_stages(status: str) -> set[str]:
    """The stages `dvc status` lists as changed."""
    return set(re.findall(r"^(\S+):$", status, flags=re.M))


def locked_stages(root: Path, *stages: str) -> list[str]:
    """The dvc.lock entries of `stages`: `stage`, `stage@<item>` (foreach) or `stage-<item>`
    (one output per item)."""
    import yaml

    locked = yaml.safe_load((root / "dvc.lock").read_text())["stages"]
    return [name for name in locked if re.split(r"[@-]", name, maxsplit=1)[0] in stages]


def dvc_reruns_to_the_same_bytes(root: Path, stages: list[str], env: dict[str, str]) -> None:
    """DVC, forced to rerun `stages` on their own in a tree Snakemake built, writes the bytes
    Snakemake wrote and has nothing left to do: the front ends are interchangeable on one machine
    (a whole second build by DVC costs minutes per project). Afterwards Snakemake sees outputs newer
    than what it built from them: ask it before."""
    before = output_digests(root)
    done = subprocess.run(
        ["dvc", "repro", "--force", "--single-item", *stages],
        cwd=root, env=env, capture_output=True, text=True,
    )  # fmt: skip
    log = done.stdout + done.stderr
    assert done.returncode == 0, log[-5000:]
    assert ran_stages(log) == set(stages), log[-3000:]
    after = output_digests(root)
    assert after.keys() == before.keys()
    assert {name for name in after if after[name] != before[name]} == set()
    status = subprocess.run(
        ["dvc", "status"], cwd=root, env=env, capture_output=True, text=True, check=True
    ).stdout
    assert "Data and pipelines are up to date" in status, status[-3000:]


def zeroshot_off(params: dict) -> dict:
    """Switch off the zero-shot suite, every suite that requires it, and the correspondence suite
    (its own model step per set): for tests about the retrieval suites."""
    from vlstress.pipeline import SUITES

    off = {
        name: False
        for name, suite in SUITES.items()
        if name in ("zeroshot", "correspondence") or "zeroshot" in suite.requires
    }
    params["suites"].update(off)
    return params


def finetune_off(params: dict) -> dict:
    """Switch off robust fine-tuning and leave out the models of its checkpoints (tests about other
    things)."""
    params["suites"]["finetune"] = False
    params["models"] = {
        slug: entry
        for slug, entry in params["models"].items()
        if not str(entry.get("pretrained") or "").startswith("results/finetune/")
    }
    return params


def embed_set(kind: str, source: Path | str, flags: list, out: Path | str) -> Path:
    """One set embedded alone through the embedding engine, as a model job writes it (`.npy` +
    sidecar): `images` of a manifest, `captions` of a manifest or caption set, an image `variant`
    folder."""
    import argparse

    from vlstress.embedding import sets
    from vlstress.embedding.flags import add_model_arguments, model_spec

    parser = argparse.ArgumentParser()
    add_model_arguments(parser)
    args = parser.parse_args([str(flag) for flag in flags])
    if kind == "images":
        item = sets.original_images(Path(source))
    elif kind == "captions":
        item = sets.captions(Path(source))
    else:
        from vlstress.suites.rococo_image.sets import image_variant

        item = image_variant(Path(source))
    sets.require_files([item])
    sets.write(item, sets.load(model_spec(args), args), "embed-set", Path(out))
    return Path(out)


APT_LOCK = Path(tempfile.gettempdir()) / "vlstress-tests-apt.lock"


def apt_install(packages: list[str], recommends: bool = True, timeout: float = 900) -> None:
    """`apt-get update` + `apt-get install` (root), or skip the test saying why. Serialised by a
    file lock: test workers (pytest -n) that install at the same time would otherwise find dpkg's
    lock taken and skip."""
    import fcntl
    import shutil

    apt = shutil.which("apt-get", path=os.pathsep.join([os.environ.get("PATH", ""), "/usr/bin"]))
    if os.geteuid() != 0 or not apt:
        pytest.skip(f"{' '.join(packages)} missing; installing needs root and apt-get")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    extra = [] if recommends else ["--no-install-recommends"]
    with open(APT_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for cmd in (
            [apt, "update", "-q"],
            [apt, "-o", "DPkg::Lock::Timeout=600", "install", "-y", "-q", *extra, *packages],
        ):
            try:
                done = subprocess.run(
                    cmd, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                    timeout=timeout,
                )  # fmt: skip
            except subprocess.TimeoutExpired:
                pytest.skip(f"`{' '.join(cmd)}` timed out")
            if done.returncode != 0:
                pytest.skip(f"`{' '.join(cmd)}` failed: {done.stderr.strip()[-500:]}")
