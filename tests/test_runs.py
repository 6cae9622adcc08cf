"""One run at a time per checkout, and a killed run needs no folklore (slow: a minute or two).

A Snakemake run holds DVC's repository lock: `dvc repro` started meanwhile stops before
touching anything, and Snakemake refuses to start while DVC works. After `kill -9` at any
point (Snakemake with its job, while the first job starts or while a model step encodes;
one step alone; `dvc repro`) the plain rerun finishes the work, with no `--unlock`, no
`--rerun-incomplete`, nothing partial left, and the same bytes as an uninterrupted run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from conftest import copy_repo, finetune_off, zeroshot_off

pytestmark = pytest.mark.slow
pytest.importorskip("snakemake")
pytest.importorskip("dvc")

ENV = {
    **os.environ,
    "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
}
MODEL = "vit-s-32-random"
TARGET = f"results/embeddings/{MODEL}/retrieval"  # every retrieval set of the model (a folder)


def sh(*cmd: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise AssertionError(
            f"{' '.join(cmd)} failed ({result.returncode}):\n"
            f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
        )
    return result


@pytest.fixture()
def project(tmp_path) -> Path:
    root = copy_repo(tmp_path / "repo")
    params_path = root / "params.yaml"
    params = yaml.safe_load(params_path.read_text())
    params["dataset"]["max_images"] = 4
    params["models"] = {MODEL: {"arch": "ViT-S-32", "pretrained": None}}
    finetune_off(params)
    zeroshot_off(params)  # not what this test is about
    # the model step embeds the originals only
    params["suites"].update(rococo_text=False, rococo_image=False)
    params_path.write_text(yaml.safe_dump(params, sort_keys=False))
    sh("vlstress", "pipeline", "render", cwd=root)
    (root / "dvc.lock").unlink(missing_ok=True)
    sh("git", "init", "-q", cwd=root)
    return root


def start_snakemake(root: Path) -> subprocess.Popen:
    return subprocess.Popen(
        ["snakemake", "--cores", "1", TARGET],
        cwd=root,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def wait_for(condition, what: str, timeout: float = 120) -> None:
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def test_snakemake_refuses_while_dvc_holds_the_checkout(project):
    import zc.lockfile

    (project / ".dvc" / "tmp").mkdir(parents=True, exist_ok=True)
    # what `dvc repro` holds between stages
    lock = zc.lockfile.LockFile(str(project / ".dvc" / "tmp" / "lock"))
    try:
        result = sh("snakemake", "--cores", "1", TARGET, cwd=project, check=False)
    finally:
        lock.close()
    assert result.returncode != 0
    assert (
        "this checkout is in use" in result.stdout + result.stderr
        and str(os.getpid()) in result.stdout + result.stderr
    )
    assert not (project / "data" / "raw" / "demo").exists()
    # while DVC runs a stage it lets go of that lock; its read/write lock names the stage's process
    (project / ".dvc" / "tmp" / "rwlock").write_text(
        json.dumps(
            {"read": {}, "write": {"data/raw/demo": {"pid": os.getpid(), "cmd": "dvc repro"}}}
        )
    )
    result = sh("snakemake", "--cores", "1", TARGET, cwd=project, check=False)
    assert (
        result.returncode != 0
        and f"a DVC run (process {os.getpid()})" in result.stdout + result.stderr
    )
    assert not (project / "data" / "raw" / "demo").exists()


def test_dvc_refuses_while_snakemake_runs_and_touches_nothing(project):
    run = start_snakemake(project)
    try:
        wait_for(
            lambda: (project / "data" / "prepared" / "manifest.json").is_file(), "the manifest"
        )
        manifest = (project / "data" / "prepared" / "manifest.json").read_bytes()
        result = sh("dvc", "repro", cwd=project, check=False)
        assert result.returncode != 0 and "Unable to acquire lock" in result.stdout + result.stderr
        assert (project / "data" / "prepared" / "manifest.json").read_bytes() == manifest
        assert run.wait(timeout=600) == 0, run.stdout.read()
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    assert (project / TARGET / "images.npy").is_file()
    # DVC runs the rest later
    assert "Data and pipelines are up to date" not in sh("dvc", "status", cwd=project).stdout
    assert sh("dvc", "repro", "embed_retrieval", cwd=project).returncode == 0


CHECKED = (
    "data/prepared/manifest.json",
    f"results/models/{MODEL}.json",
    *(
        f"{TARGET}/{name}"
        for name in ("images.npy", "images.npy.json", "texts.npy", "texts.npy.json")
    ),
)


@pytest.fixture(scope="module")
def reference(module_tmp) -> Path:
    """An uninterrupted Snakemake run of the same params: what every killed-then-rerun project must
    equal."""
    root = copy_repo(module_tmp.mktemp("reference") / "repo")
    params_path = root / "params.yaml"
    params = yaml.safe_load(params_path.read_text())
    params["dataset"]["max_images"] = 4
    params["models"] = {MODEL: {"arch": "ViT-S-32", "pretrained": None}}
    finetune_off(params)
    zeroshot_off(params)
    params["suites"].update(rococo_text=False, rococo_image=False)
    params_path.write_text(yaml.safe_dump(params, sort_keys=False))
    sh("vlstress", "pipeline", "render", cwd=root)
    (root / "dvc.lock").unlink(missing_ok=True)
    sh("git", "init", "-q", cwd=root)
    sh("snakemake", "--cores", "1", TARGET, cwd=root)
    return root


def same_as_reference(project: Path, reference: Path) -> None:
    assert (project / "params.yaml").read_bytes() == (reference / "params.yaml").read_bytes()
    for name in CHECKED:
        assert (project / name).read_bytes() == (reference / name).read_bytes(), name
    leftovers = [
        p for p in project.rglob("*") if p.name.startswith(".") and p.name.endswith(".tmp")
    ]
    assert not leftovers, f"partial files left: {leftovers}"


def step_processes(project: Path, name: str) -> list:
    """The Python processes running `vlstress <name>` in `project` (never another checkout's: tests
    may run side by side)."""
    import psutil

    found = []
    for proc in psutil.process_iter(["cmdline", "cwd"]):
        cmdline = proc.info["cmdline"] or []
        # the step itself (`python .../vlstress <name> ...`), not the shell line around it
        if (
            len(cmdline) > 2
            and "python" in Path(cmdline[0]).name
            and cmdline[1].endswith("vlstress")
            and cmdline[2] == name
        ):
            if proc.info["cwd"] and Path(proc.info["cwd"]).resolve() == project.resolve():
                found.append(proc)
    return found


def step_running(project: Path, name: str) -> bool:
    return bool(step_processes(project, name))


@pytest.mark.parametrize("point", ["model_card", "embed_retrieval"])
def test_after_kill_9_of_snakemake_the_plain_rerun_finishes(project, reference, point):
    run = start_snakemake(project)
    if point == "model_card":
        wait_for(lambda: (project / "logs" / "model_card").is_dir(), "a job to start")
    else:
        wait_for(
            lambda: step_running(project, "embed-retrieval"),
            "the embedding step to run",
            timeout=300,
        )
        time.sleep(2)  # in the middle of it: the model is loaded, batches are being encoded
    os.killpg(run.pid, signal.SIGKILL)  # Snakemake and its running job, at once
    run.wait()
    assert any((project / ".snakemake" / "locks").glob("*")), "a killed Snakemake leaves its locks"
    rerun = sh("snakemake", "--cores", "1", TARGET, cwd=project)
    assert "Nothing to be done" not in rerun.stdout + rerun.stderr
    again = sh("snakemake", "--cores", "1", "-n", TARGET, cwd=project)
    assert "Nothing to be done" in again.stdout + again.stderr
    same_as_reference(project, reference)


def test_a_step_killed_alone_fails_the_run_loudly_and_the_rerun_finishes(project, reference):
    run = start_snakemake(project)
    try:
        wait_for(
            lambda: step_running(project, "embed-retrieval"),
            "the embedding step to run",
            timeout=300,
        )
        for proc in step_processes(project, "embed-retrieval"):
            proc.kill()  # SIGKILL to the step alone: the shell around it and Snakemake live on
        output, _ = run.communicate(timeout=300)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    assert run.returncode != 0
    # the console names the step and its log
    assert "vlstress: step failed (exit 137)" in output and "embed_retrieval" in output
    assert not (project / TARGET).exists()  # no partial embeddings
    sh("snakemake", "--cores", "1", TARGET, cwd=project)
    same_as_reference(project, reference)


def test_after_kill_9_of_dvc_repro_the_plain_rerun_finishes(project, reference):
    stage = f"embed_retrieval@{MODEL}"
    run = subprocess.Popen(
        ["dvc", "repro", stage],
        cwd=project,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        wait_for(
            lambda: step_running(project, "embed-retrieval"),
            "DVC to run the embedding step",
            timeout=300,
        )
        time.sleep(2)
    finally:
        os.killpg(run.pid, signal.SIGKILL)  # dvc and the step it runs
        run.wait()
    assert not (project / TARGET).exists()
    result = sh("dvc", "repro", stage, cwd=project)  # no `dvc unlock`, no cleanup by hand
    assert f"Running stage '{stage}'" in result.stdout + result.stderr
    same_as_reference(project, reference)
    assert "up to date" in sh("dvc", "status", stage, cwd=project).stdout
