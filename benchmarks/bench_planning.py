"""Benchmark: planning the workflow at paper scale (no model work).

For N models (seeded random-init, several architectures) x the full ImageNet-C grid (19
corruptions x 5 severities) x every suite on, in a fresh copy of the checkout, times:

- `vlstress pipeline render` (dvc.yaml from the declarations) and `vlstress pipeline check`
  (the params check and the staleness check, what the gate runs);
- planning from nothing built: `snakemake -n` (DAG + plan) and `dvc status`;
- planning when everything is built: every output is created (empty files; a folder with one
  file), `dvc commit --force` records them in dvc.lock (timed too), then `dvc status` and
  `snakemake -n`, which must find nothing to do;
- the sizes of dvc.yaml and dvc.lock, the number of jobs, and the growth exponent of each time
  and size over N (least-squares slope of log(value) against log(N)).

A command over the per-command limit (`--timeout`) is recorded as such (its time a lower bound).
Writes benchmarks/results/bench_planning[-<tag>].json and prints a Markdown table.

    python benchmarks/bench_planning.py --models 10,30,100,300
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_workflow import copy_checkout, workflow_env  # noqa: E402
from paper_grid import grid_params  # noqa: E402  (the papers' layout with N models)


def timed(cmd: list[str], cwd: Path, timeout: float) -> dict:
    start = time.perf_counter()
    try:
        done = subprocess.run(
            cmd, cwd=cwd, env=workflow_env(), capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return {"s": timeout, "timed_out": True, "ok": False, "out": ""}
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        print(
            f"  {' '.join(cmd)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}",
            file=sys.stderr,
        )
    return {
        "s": round(seconds, 2),
        "timed_out": False,
        "ok": done.returncode == 0,
        "out": done.stdout + done.stderr,
    }


def jobs_planned(out: str) -> int | None:
    """The job count of `snakemake -n`'s summary table ("total  N")."""
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "total" and parts[1].isdigit():
            return int(parts[1])
    return 0 if "Nothing to be done" in out else None


def build_everything(root: Path, params: dict) -> list[Path]:
    """Create every output of every stage, so both front ends see a built workflow; the paths."""
    from vlstress.pipeline import active_stages
    from vlstress.pipeline.dvc import addresses

    folders = {
        out.path
        for stage in active_stages(params)
        for out in stage.outputs.values()
        if out.directory
    }
    made = []
    for _, paths in addresses(params):
        for path in paths:
            target = root / path
            if any(_matches(path, template) for template in folders):
                target.mkdir(parents=True, exist_ok=True)
                (target / "part.txt").write_text(path)
                made.append(target / "part.txt")
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(path)
            made.append(target)
    return made


def same_time(paths: list[Path]) -> None:
    """One mtime for every output (files, then folders): no input newer than an output made from
    it, as Snakemake compares. Again after `dvc commit`, which re-links outputs (new mtimes)."""
    now = time.time()
    for path in sorted(paths, key=lambda p: p.is_dir()):
        os.utime(path, (now, now))


def _matches(path: str, template: str) -> bool:
    """Does a concrete path come from an output template (`data/testsets/{testset}`)?"""
    import re

    pattern = re.escape(template)
    pattern = re.sub(r"\\\{[^}]*\\\}", "[^/]+", pattern)
    return re.fullmatch(pattern, path) is not None


def placeholders(value, root: Path):
    """The params with every absolute path that does not exist on this machine (the paper grid's
    hub-scale data sets, /data/imagenet/val ...) replaced by an empty stand-in inside the project
    (a file where the name has a suffix, else a folder): planning reads no data, but the params
    check refuses a named input that is not there."""
    if isinstance(value, dict):
        return {k: placeholders(v, root) for k, v in value.items()}
    if isinstance(value, list):
        return [placeholders(v, root) for v in value]
    if isinstance(value, str) and value.startswith("/") and not Path(value).exists():
        target = root / "external" / value.lstrip("/")
        if target.suffix:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.touch()
        else:
            target.mkdir(parents=True, exist_ok=True)
        return str(target)
    return value


def one_size(n_models: int, base: dict, timeout: float, keep: Path | None, built_max: int) -> dict:
    root = Path(tempfile.mkdtemp(prefix=f"bench-planning-{n_models}-"))
    try:
        copy_checkout(root)
        params = placeholders(grid_params(base, n_models), root)
        (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
        for cmd in (["git", "init", "-q"], ["git", "add", "-A"]):
            subprocess.run(cmd, cwd=root, check=True)
        row: dict = {"models": n_models}

        def run(key: str, cmd: list[str]) -> dict:
            result = timed(cmd, root, timeout)
            row[key], row[f"{key}_timed_out"] = result["s"], result["timed_out"]
            row[f"{key}_ok"] = result["ok"]
            return result

        run("render_s", ["vlstress", "pipeline", "render"])
        run("check_s", ["vlstress", "pipeline", "check"])
        row["dvc_yaml_kb"] = round((root / "dvc.yaml").stat().st_size / 1024, 1)
        row["jobs"] = jobs_planned(
            run("snakemake_n_s", ["snakemake", "-n", "--quiet", "rules"])["out"]
        )
        # `dvc repro --dry` stops at the first stage whose input an earlier stage makes
        run("dvc_status_s", ["dvc", "status"])
        if n_models > built_max:  # `dvc commit` of every stage takes minutes per ten models
            print(json.dumps(row), flush=True)
            return row
        made = build_everything(root, params)
        row["outputs"] = len(made)
        run("dvc_commit_s", ["dvc", "commit", "--force", "--quiet"])
        same_time(made)
        lock = root / "dvc.lock"
        row["dvc_lock_kb"] = round(lock.stat().st_size / 1024, 1) if lock.is_file() else None
        row["dvc_status_idle"] = "up to date" in run("dvc_status_built_s", ["dvc", "status"])["out"]
        built = run("snakemake_n_built_s", ["snakemake", "-n", "--quiet", "rules"])
        row["snakemake_n_built_jobs"] = jobs_planned(built["out"])
        print(json.dumps(row), flush=True)
        return row
    finally:
        if keep is not None:
            shutil.copytree(root, keep / root.name, symlinks=True, dirs_exist_ok=True)
        shutil.rmtree(root, ignore_errors=True)


def growth(rows: list[dict], key: str) -> float | None:
    """Least-squares slope of log(value) over log(models): 1 is linear growth."""
    points = [(math.log(r["models"]), math.log(r[key])) for r in rows if r.get(key)]
    if len(points) < 2:
        return None
    mx = sum(x for x, _ in points) / len(points)
    my = sum(y for _, y in points) / len(points)
    sxx = sum((x - mx) ** 2 for x, _ in points)
    return round(sum((x - mx) * (y - my) for x, y in points) / sxx, 2) if sxx else None


COLUMNS = (
    ("models", "models"),
    ("jobs", "jobs"),
    ("render_s", "render (s)"),
    ("check_s", "params check (s)"),
    ("snakemake_n_s", "`snakemake -n` (s)"),
    ("dvc_status_s", "`dvc status` (s)"),
    ("dvc_commit_s", "`dvc commit` (s)"),
    ("dvc_status_built_s", "`dvc status`, built (s)"),
    ("snakemake_n_built_s", "`snakemake -n`, built (s)"),
    ("dvc_yaml_kb", "dvc.yaml (KiB)"),
    ("dvc_lock_kb", "dvc.lock (KiB)"),
)


def markdown(rows: list[dict]) -> str:
    lines = [
        "| " + " | ".join(title for _, title in COLUMNS) + " |",
        "|" + "---:|" * len(COLUMNS),
    ]
    for row in rows:
        cells = []
        for key, _ in COLUMNS:
            value = row.get(key)
            late = row.get(f"{key}_timed_out")
            cells.append("–" if value is None else f"> {value}" if late else f"{value}")
        lines.append("| " + " | ".join(cells) + " |")
    exponents = {title: growth(rows, key) for key, title in COLUMNS[2:]}
    lines.append("| growth exponent | | " + " | ".join(str(e) for e in exponents.values()) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="10,30,100,300", help="model counts, comma-separated")
    parser.add_argument("--timeout", type=float, default=900, help="limit per command (s)")
    parser.add_argument("--tag", default="", help="suffix of the result file")
    parser.add_argument("--keep", type=Path, default=None, help="copy each project here")
    parser.add_argument(
        "--built-max",
        type=int,
        default=30,
        help="build and commit everything (the built-state columns) up to this many models",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="default: benchmarks/results/bench_planning[-TAG].json",
    )
    args = parser.parse_args(argv)
    base = yaml.safe_load((ROOT / "params.yaml").read_text())
    rows = [
        one_size(int(n), base, args.timeout, args.keep, args.built_max)
        for n in args.models.split(",")
    ]
    result = {
        "rows": rows,
        "growth": {key: growth(rows, key) for key, _ in COLUMNS[2:]},
        "cpu_count": os.cpu_count(),
        "machine": os.uname().machine,
    }
    out = args.out or (
        ROOT / "benchmarks" / "results" / f"bench_planning{'-' + args.tag if args.tag else ''}.json"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(markdown(rows))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
