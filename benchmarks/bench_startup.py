"""Benchmark (audit): the fixed cost of each workflow step, and which steps import torch/open_clip.

Issue 26 #3: a step that runs no model must not import torch or open_clip. Every stage of the
demo's params (`vlstress.pipeline.active_stages`) is one `vlstress <subcommand>`; this audit

- (a) imports each subcommand's command module the way a step does (`cli.build_parser(sub)`,
  under `python -X importtime`): import seconds and whether torch / open_clip came with it;
- (b) runs the steps themselves: the concrete command of each stage instance from dvc.lock
  (`stages[address].cmd`), in a copy of the built checkout (params, dvc.yaml, dvc.lock,
  workflow/, data/ and results/ copied to a temporary folder; the instance's outputs removed
  first, as DVC and Snakemake do), under `python -X importtime` with a probe that records the
  heavy modules in `sys.modules` at exit and every model creation (`vlstress.embedding.models.
  load`, `open_clip.factory.create_model`). Per step: wall seconds, peak RSS (the child's own,
  from wait4), total import seconds (sum of the top-level imports' cumulative time), seconds of
  the torch and open_clip imports and the import chain that first pulled torch in.

A stage runs a model when it is declared `gpu=True` or when its run created one (the probe); for
stages not run, when a module its command reaches calls `models.load(` (static). By default only
the stages that run no model are run (the first instance of each; `--all-instances`: every
instance); `--run-models` runs the model stages too (minutes each on CPU). Stages not run keep
the import probe and the last demo run's own benchmark files (logs/benchmarks/**/*.tsv).

Writes benchmarks/results/bench_startup[-TAG].json and .md (a Markdown table per stage kind) and
prints the table; `--compare OTHER.json` adds the before/after table (wall, RSS, job-seconds).

    python benchmarks/bench_startup.py --tag before          # before a change
    python benchmarks/bench_startup.py --compare benchmarks/results/bench_startup-before.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
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
RESULTS = ROOT / "benchmarks" / "results"
HEAVY = ("torch", "open_clip", "torchvision", "torchmetrics", "torchattacks", "transformers")
COPIED = ("params.yaml", "dvc.yaml", "dvc.lock", "workflow", "data", "results")

# Runs `vlstress` (its cli.main) with a probe: model creations and the heavy modules present at
# exit, written as JSON to $BENCH_STARTUP_PROBE. The probe patches two functions right after their
# modules execute (a meta-path finder), so it imports nothing of its own.
PROBE = r"""
import atexit, importlib.machinery, json, os, sys
CALLS = []
PATCH = {"vlstress.embedding.models": "load", "open_clip.factory": "create_model"}
HEAVY = %(heavy)r

def wrap(name, function):
    def wrapped(*args, **kwargs):
        CALLS.append(name)
        return function(*args, **kwargs)
    return wrapped

SITES = {}

class Finder:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name in ("torch", "open_clip") and name not in SITES:
            import traceback
            ours = [f for f in traceback.extract_stack() if "/vlstress/" in f.filename]
            site = ours[-1] if ours else None
            SITES[name] = f"{site.filename.split('/vlstress/')[-1]}:{site.lineno}" if site else "?"
        if name not in PATCH:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module
        def exec_module(module):
            run(module)
            attr = PATCH[name]
            setattr(module, attr, wrap(name + "." + attr, getattr(module, attr)))
        spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, Finder)

@atexit.register
def report():
    with open(os.environ["BENCH_STARTUP_PROBE"], "w") as f:
        json.dump({"models": CALLS, "heavy": [m for m in HEAVY if m in sys.modules],
                   "sites": SITES, "modules": len(sys.modules)}, f)

sys.argv = ["vlstress", *sys.argv[1:]]
from vlstress.cli import main
sys.exit(main())
""" % {"heavy": HEAVY}

# Imports what a step imports before its run: the command module, through the parser.
PARSER_PROBE = r"""
import json, sys
from vlstress.cli import build_parser
build_parser(sys.argv[1])
print(json.dumps({"heavy": [m for m in %(heavy)r if m in sys.modules],
                  "modules": len(sys.modules)}))
""" % {"heavy": HEAVY}


# --- -X importtime ----------------------------------------------------------------------------

IMPORT_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|( +)(\S+)\s*$")


def parse_importtime(stderr: str) -> dict:
    """Total import seconds (top-level imports' cumulative time), the first import of torch and
    of open_clip (cumulative seconds) and the chain of modules that first imported torch."""
    rows = []  # (depth, name, cumulative us), in the order printed: children before parents
    for line in stderr.splitlines():
        match = IMPORT_LINE.match(line)
        if match:
            depth = (len(match.group(3)) - 1) // 2
            rows.append((depth, match.group(4), int(match.group(2))))
    total = sum(cum for depth, _, cum in rows if depth == 0)

    def first(name: str) -> int | None:
        return next((i for i, row in enumerate(rows) if row[1] == name), None)

    found: dict = {"import_s": round(total / 1e6, 3), "modules_imported": len(rows)}
    for name in ("torch", "open_clip"):
        at = first(name)
        found[f"{name}_s"] = None if at is None else round(rows[at][2] / 1e6, 3)
    at = first("torch")
    chain = []
    if at is not None:
        depth = rows[at][0]
        for row in rows[at + 1 :]:  # a parent is the next row one level up
            if row[0] < depth:
                chain.append(row[1])
                depth = row[0]
                if depth == 0:
                    break
    found["torch_via"] = " <- ".join(chain)
    return found


# --- stages -----------------------------------------------------------------------------------


def stage_table(params: dict) -> list[dict]:
    from vlstress.code_deps import dependencies
    from vlstress.pipeline import active_stages, commands, stage_modules
    from vlstress.pipeline.dvc import addresses

    known = commands()
    stages = active_stages(params)
    names = sorted((stage.name for stage in stages), key=len, reverse=True)
    by_stage: dict[str, list[str]] = {}
    for address, _ in addresses(params):
        base = address.split("@")[0]  # `name@key`, or `name-key` for a stage per item
        owner = base if base in names else next(n for n in names if base.startswith(n + "-"))
        by_stage.setdefault(owner, []).append(address)
    table = []
    for stage in stages:
        files = {path for module in stage_modules(stage) for path in dependencies(module)}
        loads = sorted(
            path.name for path in files if "models.load(" in path.read_text(encoding="utf-8")
        )
        table.append(
            {
                "stage": stage.name,
                "subcommand": stage.subcommand,
                "module": known[stage.subcommand][0],
                "gpu": bool(stage.gpu),
                "static_model": bool(loads),
                "instances": by_stage.get(stage.name, []),
            }
        )
    return table


def demo_logs(root: Path = ROOT) -> dict[str, dict]:
    """Per stage: the jobs of the last demo run (logs/benchmarks/<stage>/...tsv): count, sum of
    seconds, peak RSS (MB)."""
    found: dict[str, dict] = {}
    base = root / "logs" / "benchmarks"
    for tsv in sorted(base.rglob("*.tsv")):
        header, values = (line.split("\t") for line in tsv.read_text().splitlines()[:2])
        record = dict(zip(header, values))
        stage = tsv.relative_to(base).parts[0].removesuffix(".tsv")
        entry = found.setdefault(stage, {"jobs": 0, "sum_s": 0.0, "max_rss_mb": 0.0})
        entry["jobs"] += 1
        entry["sum_s"] = round(entry["sum_s"] + float(record["s"]), 2)
        rss = float(record["max_rss"]) if record.get("max_rss", "-") != "-" else 0.0
        entry["max_rss_mb"] = max(entry["max_rss_mb"], rss)
    return found


# --- running ----------------------------------------------------------------------------------


def copy_checkout(dest: Path) -> Path:
    """The built checkout's inputs and outputs (the code runs from the installed package)."""
    dest.mkdir(parents=True)
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, dest / name, symlinks=True)
        elif source.is_file():
            shutil.copy2(source, dest / name)
    return dest


def env() -> dict[str, str]:
    return {
        **os.environ,
        "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
    }


def timed(command: list[str], cwd: Path, probe_file: Path | None = None) -> dict:
    """Run one child: wall seconds, its own peak RSS (MB, from wait4), stdout, stderr."""
    environment = env()
    if probe_file is not None:
        environment["BENCH_STARTUP_PROBE"] = str(probe_file)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        child = subprocess.Popen(command, cwd=cwd, env=environment, stdout=out, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return {
            "rc": child.returncode,
            "wall_s": round(wall, 3),
            "max_rss_mb": round(usage.ru_maxrss / 1024, 1),
            "stdout": out.read().decode(errors="replace"),
            "stderr": err.read().decode(errors="replace"),
        }


def parser_probe(subcommand: str) -> dict:
    done = timed([sys.executable, "-X", "importtime", "-c", PARSER_PROBE, subcommand], ROOT)
    if done["rc"] != 0:
        return {"error": done["stderr"][-2000:]}
    probe = json.loads(done["stdout"].strip().splitlines()[-1])
    return {
        **parse_importtime(done["stderr"]),
        "heavy": probe["heavy"],
        "wall_s": done["wall_s"],
        "max_rss_mb": done["max_rss_mb"],
    }


def run_step(address: str, lock: dict, repo: Path, scratch: Path) -> dict:
    entry = lock["stages"][address]
    argv = shlex.split(entry["cmd"])
    assert argv[0] == "vlstress", entry["cmd"]
    for out in entry.get("outs", []):  # as DVC and Snakemake do before a job
        path = repo / out["path"]
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()
    probe_file = scratch / f"{address.replace('/', '_')}.json"
    command = [sys.executable, "-X", "importtime", "-c", PROBE, *argv[1:]]
    done = timed(command, repo, probe_file)
    found = {
        "address": address,
        "rc": done["rc"],
        "wall_s": done["wall_s"],
        "max_rss_mb": done["max_rss_mb"],
        **parse_importtime(done["stderr"]),
    }
    if probe_file.is_file():
        probe = json.loads(probe_file.read_text())
        found.update(
            heavy=probe["heavy"], models_created=probe["models"], import_sites=probe["sites"]
        )
    if done["rc"] != 0:
        tail = [line for line in done["stderr"].splitlines() if not IMPORT_LINE.match(line)]
        found["error"] = "\n".join(tail[-20:])
    return found


def summarise(row: dict, logs: dict) -> dict:
    runs = row.get("runs", [])
    ok = [run for run in runs if run["rc"] == 0]
    demo = logs.get(row["stage"], {})
    jobs = len(row["instances"])
    summary = {
        "jobs": jobs,
        "demo_sum_s": demo.get("sum_s"),
        "demo_max_rss_mb": demo.get("max_rss_mb"),
        "demo_mean_s": round(demo["sum_s"] / demo["jobs"], 2) if demo else None,
    }
    if ok:
        mean = statistics.fmean(run["wall_s"] for run in ok)
        summary.update(
            ran=len(ok),
            wall_s=round(mean, 2),
            sum_s=round(mean * jobs, 2),  # every instance, at the mean of those run
            max_rss_mb=max(run["max_rss_mb"] for run in ok),
            import_s=round(statistics.fmean(run["import_s"] for run in ok), 2),
            torch_s=max((run["torch_s"] or 0.0) for run in ok),
            torch=any("torch" in run.get("heavy", []) for run in ok),
            open_clip=any("open_clip" in run.get("heavy", []) for run in ok),
            heavy=sorted({m for run in ok for m in run.get("heavy", [])}),
            torch_via=next((run["torch_via"] for run in ok if run["torch_via"]), ""),
            torch_site=next((run["import_sites"].get("torch", "") for run in ok), ""),
            model_created=any(run.get("models_created") for run in ok),
        )
    else:
        summary.update(ran=0)
    parser = row.get("parser", {})
    summary["runs_model"] = (
        row["gpu"] or summary.get("model_created", False)
        if ok
        else row["gpu"] or row["static_model"]
    )
    summary["parser_torch"] = "torch" in parser.get("heavy", [])
    summary["parser_import_s"] = parser.get("import_s")
    return summary


# --- tables -----------------------------------------------------------------------------------


def yes(value) -> str:
    return "yes" if value else "no"


def num(value, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def markdown(rows: list[dict]) -> str:
    lines = [
        "| stage | subcommand | jobs | model | wall s | RSS MB | import s | torch s | torch "
        "| open_clip | torch at parser | torch first imported at | job-s (all jobs) "
        "| demo job-s | demo RSS |",
        "|---|---|--:|---|--:|--:|--:|--:|---|---|---|---|--:|--:|--:|",
    ]
    for row in rows:
        s = row["summary"]
        ran = s["ran"] > 0
        lines.append(
            "| "
            + " | ".join(
                [
                    row["stage"],
                    row["subcommand"],
                    str(s["jobs"]),
                    yes(s["runs_model"]),
                    num(s.get("wall_s")) if ran else "not run",
                    num(s.get("max_rss_mb"), 0) if ran else "–",
                    num(s.get("import_s")) if ran else "–",
                    num(s.get("torch_s")) if ran else "–",
                    yes(s.get("torch")) if ran else "–",
                    yes(s.get("open_clip")) if ran else "–",
                    yes(s["parser_torch"]),
                    s.get("torch_site", "") if ran else "",
                    num(s.get("sum_s"), 1) if ran else "–",
                    num(s["demo_sum_s"], 1),
                    num(s["demo_max_rss_mb"], 0),
                ]
            )
            + " |"
        )
    return "\n".join(lines) + "\n"


def comparison(before: dict, after: dict) -> str:
    old = {row["stage"]: row["summary"] for row in before["stages"]}
    lines = [
        "| stage | jobs | model | wall s before | wall s after | RSS MB before | RSS MB after "
        "| torch before | torch after | job-s before | job-s after |",
        "|---|--:|---|--:|--:|--:|--:|---|---|--:|--:|",
    ]
    totals = [0.0, 0.0]
    for row in after["stages"]:
        s, b = row["summary"], old.get(row["stage"])
        if b is None or not s["ran"] or not b["ran"]:
            continue
        totals[0] += b["sum_s"]
        totals[1] += s["sum_s"]
        lines.append(
            f"| {row['stage']} | {s['jobs']} | {yes(s['runs_model'])} | {num(b['wall_s'])} "
            f"| {num(s['wall_s'])} | {num(b['max_rss_mb'], 0)} | {num(s['max_rss_mb'], 0)} "
            f"| {yes(b['torch'])} | {yes(s['torch'])} | {num(b['sum_s'], 1)} "
            f"| {num(s['sum_s'], 1)} |"
        )
    lines.append(
        f"| **all stages run** | | | | | | | | | **{totals[0]:.1f}** | **{totals[1]:.1f}** |"
    )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--params", default=str(ROOT / "params.yaml"))
    parser.add_argument("--tag", default="", help="results file suffix (e.g. before)")
    parser.add_argument("--stages", default="", help="comma-separated stage names (default all)")
    parser.add_argument("--all-instances", action="store_true", help="run every instance")
    parser.add_argument("--run-models", action="store_true", help="run model stages too")
    parser.add_argument("--compare", default=None, help="an earlier results JSON (before)")
    parser.add_argument("--keep", action="store_true", help="keep the checkout copy")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="the JSON (the .md beside it; default: benchmarks/results/bench_startup[-TAG].json)",
    )
    args = parser.parse_args(argv)

    params = yaml.safe_load(Path(args.params).read_text())
    lock = yaml.safe_load((ROOT / "dvc.lock").read_text())
    logs = demo_logs()
    rows = stage_table(params)
    if args.stages:
        wanted = set(args.stages.split(","))
        rows = [row for row in rows if row["stage"] in wanted]

    probes: dict[str, dict] = {}
    for row in rows:
        if row["subcommand"] not in probes:
            probes[row["subcommand"]] = parser_probe(row["subcommand"])
        row["parser"] = probes[row["subcommand"]]

    scratch = Path(tempfile.mkdtemp(prefix="bench_startup-"))
    repo = copy_checkout(scratch / "repo")
    start = time.perf_counter()
    try:
        for row in rows:
            model = row["gpu"] or row["static_model"]
            if model and not args.run_models:
                continue
            # a stage the demo has not run yet (declared since) has no command in dvc.lock
            built = [address for address in row["instances"] if address in lock["stages"]]
            chosen = built if args.all_instances else built[:1]
            row["runs"] = []
            for address in chosen:
                found = run_step(address, lock, repo, scratch)
                row["runs"].append(found)
                print(
                    f"{address}: rc {found['rc']}, {found['wall_s']:.2f} s, "
                    f"{found['max_rss_mb']:.0f} MB, import {found['import_s']:.2f} s, "
                    f"heavy {found.get('heavy')}",
                    file=sys.stderr,
                )
                if found.get("error"):
                    print(found["error"], file=sys.stderr)
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
        else:
            print(f"checkout copy kept in {repo}", file=sys.stderr)
    for row in rows:
        row["summary"] = summarise(row, logs)

    result = {
        "params": str(Path(args.params).resolve().relative_to(ROOT)),
        "python": sys.version.split()[0],
        "cpu_count": os.cpu_count(),
        "all_instances": args.all_instances,
        "audit_wall_s": round(time.perf_counter() - start, 1),
        "stages": rows,
    }
    suffix = f"-{args.tag}" if args.tag else ""
    out = args.out or RESULTS / f"bench_startup{suffix}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    unbuilt = [row["stage"] for row in rows if not set(row["instances"]) & set(lock["stages"])]
    rows = [row for row in rows if row["stage"] not in unbuilt]
    result.update(stages=rows, not_in_dvc_lock=unbuilt)
    table = markdown(rows)
    if unbuilt:
        table += f"\nNot in dvc.lock (declared since the demo was built): {', '.join(unbuilt)}\n"
    text = table
    if args.compare:
        before = json.loads(Path(args.compare).read_text())
        result["compared_with"] = str(args.compare)
        text += "\nBefore/after (stages run in both):\n\n" + comparison(before, result)
    out.write_text(json.dumps(result, indent=1) + "\n")
    out.with_suffix(".md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
