"""Every script of benchmarks/ runs end to end on tiny settings and writes the result it documents.

The figures the docs quote come from these scripts; a script that no longer runs at HEAD (a model
renamed in params.yaml, a module moved) cannot back them. Each case runs the script as a user
does (`python benchmarks/<script>.py ...`, the tiny CLIP registered through
VLSTRESS_MODEL_CONFIGS), with its smallest options and its output redirected to a temporary
folder (never benchmarks/results/), then checks the result's keys and that its numbers are sane
(finite, positive where they are times or rates). Only the cases that take a second or two run in
the fast tier; those that import torch, build a model or copy the checkout (10-60 s each on two
shared cores) are `slow`. Covered elsewhere: `stale_stages.py` (tests/test_workflow.py, on
a built project) and `paper_grid.py`'s params file (tests/test_cost.py).
"""

from __future__ import annotations

import importlib.util
import json
import math
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import REPO, SHARED_DATA, tool_env

BENCH = REPO / "benchmarks"


@dataclass(frozen=True)
class Case:
    script: str
    args: tuple[str, ...]  # `{out}`: the result file; `{tmp}`: the case's folder
    keys: tuple[str, ...]  # top-level keys of the result
    positive: tuple[str, ...] = ()  # dotted paths of numbers that must be > 0
    codes: tuple[int, ...] = (0,)  # 1 too where the exit code reports a speed target
    slow: bool = False
    needs: tuple[str, ...] = ()  # importable modules
    data: tuple[str, ...] = ()  # paths under the shared data folder
    out: str = "result.json"
    setup: Any = field(default=None, compare=False)


def _job_logs(tmp: Path) -> None:
    """A checkout after a run, as job_times.py reads it: two stages' benchmark files."""
    header = "s\th:m:s\tmax_rss\n"
    for path, (seconds, rss) in {
        "logs/benchmarks/embed/m1.tsv": (2.5, 400.0),
        "logs/benchmarks/embed/m2.tsv": (3.5, 500.0),
        "logs/benchmarks/summarize.tsv": (1.0, 90.0),
    }.items():
        target = tmp / "root" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"{header}{seconds}\t0:00:0{int(seconds)}\t{rss}\n")


def _workflow_result(tmp: Path) -> None:
    shutil.copyfile(BENCH / "results" / "bench_workflow.json", tmp / "result.json")


CASES = {
    "bench_overlap": Case(
        "bench_overlap.py",
        ("--collection", "200", "--queries", "10", "--width", "8", "--repeats", "1"),
        ("flat_search", "estimate", "provenance"),
        positive=(
            "flat_search.one_core_macs_per_s",
            "estimate.imagenet_val_vs_laion_400m_flat_core_h",
        ),
        needs=("faiss",),
    ),
    "bench_retrieval": Case(
        "bench_retrieval.py",
        (
            "--queries",
            "12",
            "--gallery",
            "130",
            "--dim",
            "8",
            "--per-query",
            "5",
            "--chunk-size",
            "4",
            "--workdir",
            "{tmp}/work",
        ),  # fmt: skip
        ("benchmark", "matrix", "fast", "reference", "passes"),
        positive=("matrix.queries", "reference_rows"),
        codes=(0, 1),  # 1: under its speed-up target, which tiny matrices need not reach
        slow=True,
    ),
    "bench_attack": Case(
        "bench_attack.py",
        (
            "--arch",
            "vlstress-tiny",
            "--images",
            "2",
            "--classes",
            "3",
            "--steps",
            "1",
            "--batch-size",
            "2",
            "--device",
            "cpu",
            "--threads",
            "1",
        ),  # fmt: skip
        ("benchmark", "attack_seconds_per_1000", "clean_seconds_per_1000", "robust_top1"),
        positive=("attack_seconds_per_1000", "clean_seconds_per_1000"),
        slow=True,
    ),
    "bench_text_encoder": Case(
        "bench_text_encoder.py",
        (
            "--arch",
            "vlstress-tiny",
            "--n-captions",
            "4",
            "--batch-size",
            "4",
            "--repeats",
            "1",
            "--device",
            "cpu",
            "--threads",
            "1",
        ),  # fmt: skip
        ("benchmark", "n_texts", "reference_seconds", "trimmed_seconds", "max_abs_diff"),
        positive=("n_texts", "reference_seconds", "trimmed_seconds"),
        codes=(0, 1),  # 1: under its speed-up target (4 captions of a tiny model)
        data=("rococo/coco_karpathy_test.json",),
        slow=True,
    ),
    "bench_embedding": Case(
        "bench_embedding.py",
        (
            "--arch",
            "vlstress-tiny",
            "--images",
            "4",
            "--workers",
            "1",
            "--batch-size",
            "2",
            "--device",
            "cpu",
            "--threads",
            "1",
            "--data-dir",
            "{tmp}/data",
        ),  # fmt: skip
        ("benchmark", "images", "image_paths", "text", "target"),
        positive=("images", "text.captions_per_s"),
        slow=True,
    ),
    "bench_shards": Case(
        "bench_shards.py",
        (
            "--arch",
            "vlstress-tiny",
            "--images",
            "8",
            "--distinct",
            "4",
            "--shards",
            "2",
            "--device",
            "cpu",
            "--workers",
            "1",
            "--batch-size",
            "2",
            "--data-dir",
            "{tmp}/data",
        ),  # fmt: skip
        ("one_job", "sharded", "joined_vs_one_job", "provenance"),
        positive=("one_job.wall_s", "sharded.join_wall_s"),
        slow=True,
    ),
    "bench_corruptions": Case(
        "bench_corruptions.py",
        (
            "--images",
            "1",
            "--estimate-images",
            "1",
            "--size",
            "32",
            "--workers",
            "1",
            "--workdir",
            "{tmp}/work",
        ),  # fmt: skip
        ("benchmark", "rates", "imagenet_c_estimate", "provenance"),
        positive=("imagenet_c_estimate.core_hours",),
        slow=True,
    ),
    "bench_stability": Case(
        "bench_stability.py",
        ("--images", "1"),
        ("images", "perturbations", "imagenet_p"),
        positive=("imagenet_p.frames_per_model", "imagenet_p.mean_test_frames_per_s"),
        slow=True,
    ),
    "job_times": Case(
        "job_times.py",
        ("--root", "{tmp}/root", "--wall", "9"),
        ("jobs", "job_s", "wall_s", "stages"),
        positive=("jobs", "job_s"),
        setup=_job_logs,
    ),
    "paper_grid": Case(
        "paper_grid.py",
        ("--models", "12"),
        ("models", "suites"),
        out="params.yaml",
    ),
    "bench_workflow-cost-only": Case(
        "bench_workflow.py",
        ("--cost-only", "{out}", "--cost-models", "1,2", "--cost-images", "10"),
        ("benchmark", "cost_model", "stages"),
        setup=_workflow_result,
        slow=True,
    ),
    "bench_peer": Case(
        "bench_peer.py",
        ("--workloads", "x1", "--no-warm", "--workdir", "{tmp}/work"),
        ("model", "workloads"),
        slow=True,
        needs=("clip_benchmark",),
        data=("coco-mini/annotations/instances_val2017.json",),
    ),
    "bench_models": Case(
        "bench_models.py",
        ("--models", "vlstress-tiny", "--batch", "2", "--repeats", "1", "--threads", "1"),
        ("benchmark", "models"),
        positive=("models.0.images_per_s", "models.0.n_params"),
        slow=True,
    ),
    "bench_finetune": Case(
        "bench_finetune.py",
        (
            "--arch",
            "vlstress-tiny",
            "--batch",
            "2",
            "--repeats",
            "1",
            "--threads",
            "1",
            "--methods",
            "lora-r4",
        ),  # fmt: skip
        ("benchmark", "methods", "wise_ft_seconds"),
        positive=("methods.0.seconds_per_step", "methods.0.pairs_per_s"),
        slow=True,
    ),
    "bench_assistant": Case(
        "bench_assistant.py",
        (
            "--models",
            "llava:tiny",
            "--questions",
            "1",
            "--batch-size",
            "1",
            "--new-tokens",
            "1",
            "--threads",
            "1",
        ),  # fmt: skip
        ("models", "threads", "batch_size"),
        positive=("models.0.questions_per_s",),
        slow=True,
    ),
    "bench_planning": Case(
        "bench_planning.py",
        ("--models", "1", "--built-max", "0", "--timeout", "300"),
        ("rows", "growth"),
        positive=("rows.0.jobs",),
        slow=True,
    ),
    "bench_stage_cost": Case(
        "bench_stage_cost.py",
        ("--models", "1", "--repeats", "1", "--timeout", "300"),
        ("rows",),
        positive=("rows.0.command_s", "rows.0.dvc_repro_s", "rows.0.snakemake_s"),
        slow=True,
    ),
    "bench_startup": Case(
        "bench_startup.py",
        (
            "--stages",
            "summarize",
        ),
        ("stages", "audit_wall_s"),
        slow=True,
    ),
    "imagecorruptions_reference": Case(
        "imagecorruptions_reference.py",
        ("dump", "--out", "{tmp}/dump.npz", "--images", "1", "--size", "32", "--glass-images", "1"),
        (),
        needs=("imagecorruptions",),
        out="dump.npz",
        slow=True,
    ),
}


def lookup(result: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        result = result[int(part)] if isinstance(result, list) else result[part]
    return result


def test_every_benchmark_script_has_a_smoke_case():
    scripts = {p.name for p in BENCH.glob("*.py")}
    covered = {case.script for case in CASES.values()} | {"stale_stages.py"}
    assert scripts - covered == set(), "add a smoke case for each new benchmark script"


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=[pytest.mark.slow] if c.slow else []) for n, c in CASES.items()],
)
def test_benchmark_smoke(name, tmp_path):
    case = CASES[name]
    missing = [m for m in case.needs if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"{case.script} needs {', '.join(missing)} (not installed)")
    absent = [d for d in case.data if not (SHARED_DATA / d).exists()]
    if absent:
        pytest.skip(f"{case.script} needs the shared data {', '.join(absent)}")
    if case.setup is not None:
        case.setup(tmp_path)
    out = tmp_path / case.out
    args = [a.format(out=out, tmp=tmp_path) for a in case.args]
    if "{out}" not in " ".join(case.args) and case.script != "imagecorruptions_reference.py":
        args += ["--out", str(out)]
    configs = tmp_path / "configs"
    configs.mkdir()
    result = subprocess.run(
        [sys.executable, str(BENCH / case.script), *args],
        cwd=tmp_path,
        env=tool_env(configs),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode in case.codes, f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    assert out.is_file(), f"{case.script} wrote no {out.name}:\n{result.stdout[-2000:]}"
    if out.suffix == ".npz":
        return
    found = (
        yaml.safe_load(out.read_text()) if out.suffix == ".yaml" else json.loads(out.read_text())
    )
    assert set(case.keys) <= set(found), sorted(found)
    for dotted in case.positive:
        value = lookup(found, dotted)
        assert isinstance(value, (int, float)) and math.isfinite(value) and value > 0, (
            dotted,
            value,
            result.stderr[-3000:],
        )
    failed = [
        k for row in found.get("rows", []) for k, ok in row.items() if k.endswith("_ok") and not ok
    ]
    assert not failed, (failed, result.stderr[-3000:])


def test_bench_peer_sets_up_its_own_model_whatever_the_demo_models_are(tmp_path):
    """bench_peer's project: params with its own ViT-B-32 entry (not one looked up in
    params.yaml's models, which the demo changes), and the three stage commands rendered for it;
    the model card written."""
    spec = importlib.util.spec_from_file_location("bench_peer", BENCH / "bench_peer.py")
    assert spec is not None and spec.loader is not None
    peer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(peer)
    demo = yaml.safe_load((REPO / "params.yaml").read_text())["models"]
    assert peer.MODEL not in demo  # the case that failed: a lookup of a model no longer there
    entry = {
        "kind": "folder",
        "root": str(tmp_path / "images"),
        "annotations": None,
        "classnames": None,
        "max_per_class": None,
        "min_size": 1,
        "label": "category",
        "corruption": None,
        "keep": None,
        "drop": None,
    }
    manifest = {"name": "objects", "kind": "folder", "classes": ["a"], "images": []}
    params = peer.project(tmp_path, manifest, entry)
    assert params["models"] == {peer.MODEL: {"arch": "ViT-B-32", "pretrained": None}}
    card = json.loads((tmp_path / "results" / "models" / f"{peer.MODEL}.json").read_text())
    assert card["model"]["arch"] == "ViT-B-32"
    for stage in peer.STAGES:
        command = " ".join(peer.command(stage, params))
        assert peer.MODEL in command, (stage, command)
