"""Atomic writes survive kill -9: a killed writer's temp file or folder is cleared by the next
write."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from vlstress.io import atomic_dir, atomic_path, write_json

KILLED_WRITER = """
import os, signal, sys
from vlstress.io import atomic_path, atomic_dir
target = sys.argv[1]
ctx = atomic_dir(target) if sys.argv[2] == "dir" else atomic_path(target)
with ctx as tmp:
    if sys.argv[2] == "dir":
        (tmp / "half.txt").write_text("half")
    else:
        tmp.write_text("half")
    os.kill(os.getpid(), signal.SIGKILL)  # no finally, no cleanup
"""


def killed_writer(target: Path, kind: str) -> None:
    result = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(target), kind])
    assert result.returncode == -9


def temps(folder: Path) -> list[Path]:
    return sorted(folder.glob(".*.tmp"))


def test_a_killed_writers_temp_file_is_cleared_by_the_next_write(tmp_path):
    target = tmp_path / "out.json"
    killed_writer(target, "file")
    # the output never appeared, the temp stayed
    assert not target.exists() and len(temps(tmp_path)) == 1
    write_json(target, {"ok": 1})
    assert target.read_text().strip().startswith("{") and temps(tmp_path) == []


def test_a_killed_writers_temp_folder_is_cleared_by_the_next_write(tmp_path):
    target = tmp_path / "set"
    killed_writer(target, "dir")
    assert not target.exists() and len(temps(tmp_path)) == 1
    with atomic_dir(target) as tmp:
        (tmp / "manifest.json").write_text("{}")
    assert sorted(p.name for p in target.iterdir()) == ["manifest.json"] and temps(tmp_path) == []


def test_a_live_writers_temp_is_left_alone(tmp_path):
    target = tmp_path / "out.txt"
    live = tmp_path / f".out.txt.{os.getppid()}.abc.tmp"  # our parent process is alive
    live.write_text("in progress")
    with atomic_path(target) as tmp:
        tmp.write_text("done")
    assert live.exists() and target.read_text() == "done"
