"""`vlstress.pipeline.dvc_commit`: many stages committed with one write of dvc.lock give the lock
`dvc commit --force STAGE...` gives (which rewrites it once per stage)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("dvc")
ENV = {
    **os.environ,
    "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
}
DVC_YAML = """\
stages:
  one:
    cmd: echo a > a.txt
    outs:
    - a.txt
  two:
    foreach: [x, y]
    do:
      cmd: mkdir -p ${item} && echo ${item} > ${item}/f.txt
      deps:
      - a.txt
      outs:
      - ${item}
"""
STAGES = ["one", "two@x", "two@y"]


def project(root: Path) -> Path:
    root.mkdir()
    subprocess.run(["dvc", "init", "--no-scm", "-q"], cwd=root, env=ENV, check=True)
    (root / "dvc.yaml").write_text(DVC_YAML)
    (root / "a.txt").write_text("a\n")
    for item in ("x", "y"):
        (root / item).mkdir()
        (root / item / "f.txt").write_text(f"{item}\n")
    return root


def commit(root: Path, *names: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "vlstress.pipeline.dvc_commit", *names],
        cwd=root,
        env=ENV,
        capture_output=True,
        text=True,
    )


def test_one_write_gives_the_lock_dvc_commit_gives(tmp_path):
    ours = project(tmp_path / "ours")
    theirs = project(tmp_path / "theirs")
    assert commit(ours, *STAGES).returncode == 0
    subprocess.run(
        ["dvc", "commit", "--force", "--quiet", *STAGES], cwd=theirs, env=ENV, check=True
    )
    assert (ours / "dvc.lock").read_bytes() == (theirs / "dvc.lock").read_bytes()
    status = subprocess.run(
        ["dvc", "status"], cwd=ours, env=ENV, capture_output=True, text=True, check=True
    )
    assert "up to date" in status.stdout
    # the outputs are in the cache: a deleted one comes back
    shutil.rmtree(ours / "x")
    subprocess.run(["dvc", "checkout", "-q", "two@x"], cwd=ours, env=ENV, check=True)
    assert (ours / "x" / "f.txt").read_text() == "x\n"


def test_an_unknown_stage_is_named_and_nothing_is_written(tmp_path):
    root = project(tmp_path / "p")
    assert commit(root, "one").returncode == 0
    before = (root / "dvc.lock").read_bytes()
    (root / "x" / "f.txt").write_text("changed\n")
    result = commit(root, "two@x", "three")
    assert result.returncode == 2
    assert "no such DVC stage(s): three" in result.stderr
    assert (root / "dvc.lock").read_bytes() == before
