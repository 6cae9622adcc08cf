"""Benchmark: what each front end pays for one stage beyond the stage's own command, by grid size.

For N models (the papers' grid of `bench_planning.py`: every suite, 19 corruptions x 5
severities, empty stand-ins for its data), in a fresh copy of the checkout with every output made
(empty stand-ins) and committed to DVC, times with the median of `--repeats` runs:

- the command of one stage alone (a code stamp, `code_<stage>`: the one kind of command that runs
  on stand-in data, and the cheapest, so the overhead is most of what the front ends add);
- `dvc repro --single-item --force <stage>` (DVC loads every dvc.yaml, runs the command, writes
  the stage into dvc.lock);
- `snakemake --cores 1 --force <its output>` (Snakemake plans the whole workflow, runs the job,
  then `dvc commit`s the one stage it ran, as every Snakemake run of this workflow does);

and the overhead of each front end (its time minus the command's), beside the sizes of dvc.yaml
and dvc.lock and the count of stages. Writes benchmarks/results/bench_stage_cost[-<tag>].json
and prints a Markdown table.

    python benchmarks/bench_stage_cost.py --models 10,30,100
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_planning import build_everything, placeholders, same_time  # noqa: E402
from bench_workflow import copy_checkout, workflow_env  # noqa: E402
from paper_grid import grid_params  # noqa: E402


def run_timed(cmd: list[str] | str, cwd: Path, timeout: float) -> float:
    """Seconds of one run; a failure stops the benchmark with its output."""
    start = time.perf_counter()
    done = subprocess.run(
        cmd,
        cwd=cwd,
        env=workflow_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        shell=isinstance(cmd, str),
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        shown = cmd if isinstance(cmd, str) else shlex.join(cmd)
        raise SystemExit(f"{shown} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return seconds


def median_of(cmd: list[str] | str, cwd: Path, timeout: float, repeats: int) -> float:
    return round(statistics.median(run_timed(cmd, cwd, timeout) for _ in range(repeats)), 2)


def stage_command(root: Path, stage: str) -> tuple[str, str]:
    """The stage's command as dvc.yaml writes it, and its one output."""
    entry = yaml.safe_load((root / "dvc.yaml").read_text())["stages"][stage]
    (out,) = entry["outs"]
    return entry["cmd"], out if isinstance(out, str) else next(iter(out))


def one_size(n_models: int, stage: str, repeats: int, timeout: float) -> dict:
    root = Path(tempfile.mkdtemp(prefix=f"bench-stage-cost-{n_models}-"))
    try:
        copy_checkout(root)
        base = yaml.safe_load((ROOT / "params.yaml").read_text())
        params = placeholders(grid_params(base, n_models), root)
        (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
        for cmd in (["git", "init", "-q"], ["git", "add", "-A"]):
            subprocess.run(cmd, cwd=root, check=True)
        run_timed(["vlstress", "pipeline", "render"], root, timeout)
        made = build_everything(root, params)
        start = time.perf_counter()
        run_timed(["dvc", "commit", "--force", "--quiet"], root, timeout)
        commit_s = round(time.perf_counter() - start, 2)
        same_time(made)
        command, output = stage_command(root, stage)
        stages = len(subprocess.run(
            ["dvc", "stage", "list", "--name-only"], cwd=root, env=workflow_env(),
            capture_output=True, text=True, check=True,
        ).stdout.split())  # fmt: skip
        row = {
            "models": n_models,
            "stage": stage,
            "stages": stages,
            "dvc_yaml_kb": round((root / "dvc.yaml").stat().st_size / 1024, 1),
            "dvc_lock_kb": round((root / "dvc.lock").stat().st_size / 1024, 1),
            "dvc_commit_all_s": commit_s,
            "command_s": median_of(command, root, timeout, repeats),
            "dvc_repro_s": median_of(
                ["dvc", "repro", "--single-item", "--force", "--quiet", stage],
                root,
                timeout,
                repeats,
            ),
            "snakemake_s": median_of(
                ["snakemake", output, "--cores", "1", "--force", "--quiet", "all"],
                root,
                timeout,
                repeats,
            ),
        }
        row["dvc_beyond_s"] = round(row["dvc_repro_s"] - row["command_s"], 2)
        row["snakemake_beyond_s"] = round(row["snakemake_s"] - row["command_s"], 2)
        status = subprocess.run(
            ["dvc", "status", stage], cwd=root, env=workflow_env(), capture_output=True, text=True
        )
        row["dvc_status_idle_after"] = "up to date" in status.stdout
        print(json.dumps(row), flush=True)
        return row
    finally:
        shutil.rmtree(root, ignore_errors=True)


def markdown(rows: list[dict]) -> str:
    lines = [
        "| models | stages | dvc.yaml (KiB) | dvc.lock (KiB) | command (s) | `dvc repro -s -f` (s) "
        "| beyond (s) | `snakemake --force` (s) | beyond (s) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['models']} | {r['stages']} | {r['dvc_yaml_kb']} | {r['dvc_lock_kb']} "
            f"| {r['command_s']} | {r['dvc_repro_s']} | {r['dvc_beyond_s']} "
            f"| {r['snakemake_s']} | {r['snakemake_beyond_s']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="10,30,100", help="model counts, comma-separated")
    parser.add_argument(
        "--stage", default="code_zeroshot_tables", help="the stage to run (a code stamp)"
    )
    parser.add_argument("--repeats", type=int, default=3, help="runs per front end (median)")
    parser.add_argument("--timeout", type=float, default=1800, help="limit per command (s)")
    parser.add_argument("--tag", default="", help="suffix of the result file")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="default: benchmarks/results/bench_stage_cost[-TAG].json",
    )
    args = parser.parse_args(argv)
    rows = [
        one_size(int(n), args.stage, args.repeats, args.timeout) for n in args.models.split(",")
    ]
    name = "bench_stage_cost" + (f"-{args.tag}" if args.tag else "") + ".json"
    out = args.out or ROOT / "benchmarks" / "results" / name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"rows": rows}, indent=2) + "\n")
    print(markdown(rows))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
