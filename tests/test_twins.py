"""Snakemake and DVC describe the same workflow: same steps, commands, inputs, outputs."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

pytest.importorskip("snakemake")
pytest.importorskip("dvc")


def dump(tool: str, root: Path = REPO) -> list[dict]:
    result = subprocess.run(
        [sys.executable, str(REPO / "tests" / "dag_steps.py"), tool, str(root)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def normalise_snakemake_cmd(step: dict) -> str:
    """Drop the log redirection Snakemake adds; DVC prints to the console instead."""
    cmd = " ".join(step["cmd"].split())
    for log in step["log"]:
        cmd = re.sub(rf"\s*>\s*{re.escape(log)}\s+2>&1$", "", cmd)
    return cmd


def fold_into_dirs(paths: list[str], dirs: list[str]) -> set[str]:
    """A DVC folder dep stands for every Snakemake input below it."""
    folded = set()
    for path in paths:
        parent = next((d for d in dirs if path.startswith(d.rstrip("/") + "/")), None)
        folded.add(parent or path)
    return folded


@pytest.fixture(scope="module")
def dags() -> tuple[dict, dict]:
    smk = {normalise_snakemake_cmd(s): s for s in dump("snakemake")}
    dvc = {" ".join(s["cmd"].split()): s for s in dump("dvc")}
    return smk, dvc


def test_same_steps_and_commands(dags):
    smk, dvc = dags
    assert len(smk) == len(dvc) > 5
    assert set(smk) == set(dvc), {
        "only in Snakemake": sorted(set(smk) - set(dvc)),
        "only in DVC": sorted(set(dvc) - set(smk)),
    }


def test_same_inputs_and_outputs(dags):
    smk, dvc = dags
    for cmd, dvc_step in dvc.items():
        smk_step = smk[cmd]
        assert set(smk_step["outs"]) == set(dvc_step["outs"]), (dvc_step["name"], smk_step["name"])
        assert fold_into_dirs(smk_step["deps"], dvc_step["deps"]) == set(dvc_step["deps"]), (
            dvc_step["name"],
            smk_step["name"],
        )


def test_every_step_calls_the_one_cli(dags):
    smk, _ = dags
    assert all(cmd.startswith("vlstress ") for cmd in smk)
    assert all(step["log"] for step in smk.values()), "every rule must have a log"
