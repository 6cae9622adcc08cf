"""The fast tier's end-to-end workflow: Snakemake builds a small run (three demo photos, a tiny
CLIP, original retrieval and one RoCOCO image variant) from a fresh copy, and then neither front end
has anything left to do. The whole demo runs in tests/test_workflow.py (slow tier)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from conftest import TINY_CLIP, committed_copy, finetune_off, zeroshot_off

pytest.importorskip("snakemake")
pytest.importorskip("dvc")


def small(params: dict) -> dict:
    params["suites"].update(rococo_text=False, rococo_image=True)
    zeroshot_off(finetune_off(params))
    params["dataset"]["max_images"] = 3
    params["models"] = {"tiny": {"arch": "vlstress-tiny", "pretrained": None}}
    params["image_variants"].update(methods=["mix"], lams=[0.5], seeds=[1], size=64)
    params["embed"].update(threads=1, workers=0)
    return params


def sh(*cmd: str, cwd: Path, env: dict[str, str]) -> str:
    result = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    assert result.returncode == 0, (
        f"{' '.join(cmd)}:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    return result.stdout + result.stderr


def test_a_small_run_end_to_end_in_both_front_ends(tmp_path):
    configs = tmp_path / "model-configs"
    configs.mkdir()
    (configs / "vlstress-tiny.json").write_text(json.dumps(TINY_CLIP))
    path = str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")
    env = {**os.environ, "PATH": path, "VLSTRESS_MODEL_CONFIGS": str(configs)}
    root = committed_copy(tmp_path / "repo", small)
    sh("snakemake", "--cores", "2", cwd=root, env=env)

    original = json.loads((root / "results/metrics/tiny/original.json").read_text())
    assert original["task"] == "retrieval" and original["dataset"]["n_images"] == 3
    assert original["provenance"]["model"]["weights"] == "random-init"
    assert all(0 <= value <= 100 for value in original["metrics"].values())
    variant = json.loads((root / "results/metrics/tiny/image-mix-lam0.5-seed1.json").read_text())
    assert variant["condition"] == {"perturbation": "mix", "lam": 0.5, "seed": 1}
    summary = pd.read_csv(root / "results/summary.csv")
    assert set(summary["task"]) == {"retrieval", "image-stress"}
    assert (root / "results/figures/recall_bars.png").read_bytes()[:4] == b"\x89PNG"
    assert "Nothing to be done" in sh("snakemake", "-n", cwd=root, env=env)
    assert "Data and pipelines are up to date" in sh("dvc", "status", cwd=root, env=env)
