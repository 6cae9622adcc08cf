"""Which steps an edit of one source file makes stale, in both front ends, on a built checkout.

For each file: append a comment line, ask DVC (`dvc status`: the stages whose own dependencies
changed) and Snakemake (`snakemake -n`: every job it would run, those downstream included), then
put the file back with its old bytes and modification time (so neither front end sees a change
afterwards). A front end that is not idle before the edits is reported (it should be: both are
idle after `make demo`), and the lists are what each edit adds. Also counts
the source files each stage of dvc.yaml depends on, here and, with --before REV, in the dvc.yaml
of another git revision.

    make demo                                  # a built checkout
    python benchmarks/stale_stages.py          # the edits of docs/architecture.md
    python benchmarks/stale_stages.py --before 7b2072c --json stale.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

EDITS = (
    "src/vlstress/suites/calibration/figures.py",  # a suite's figure module
    "src/vlstress/suites/calibration/table.py",  # a suite's table module
    "src/vlstress/suites/calibration/suite.py",  # a suite's stage declarations
    "src/vlstress/suites/calibration/calibration.py",  # calibration code
    "src/vlstress/suites/ood/scores.py",  # OOD code
)
PROBE = "\n# stale-stages probe: this line is removed again\n"


def run(cmd: list[str], root: Path) -> str:
    env = {
        **os.environ,
        "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
    }
    done = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(
            f"{' '.join(cmd)} failed ({done.returncode}):\n"
            f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        )
    return done.stdout + done.stderr


def stamped(name: str) -> str:
    """A code stamp step (`code_<stage>`, vlstress.pipeline.code_stamp) stands for its stage: an
    edit makes the stamp stale, and the stage reruns when the stamp's bytes change."""
    return name.removeprefix("code_")


def dvc_stale(root: Path) -> list[str]:
    """The stages `dvc status` lists (a foreach item as `stage@key`)."""
    found = re.findall(r"^(\S+):\s*$", run(["dvc", "status"], root), flags=re.M)
    return sorted(set(map(stamped, found)))


def snakemake_planned(root: Path) -> list[str]:
    """The rules of the jobs `snakemake -n` would run."""
    plan = run(["snakemake", "-n"], root)
    found = re.findall(r"^(?:local)?rule (\w+):", plan, flags=re.M)
    return sorted(set(map(stamped, found)) - {"all"})


def stale_after_edit(
    root: Path, relative: str, before: dict[str, list[str]]
) -> dict[str, list[str]]:
    """What the edit adds to each front end's plan (`before`: the plan without it)."""
    path = root / relative
    data, stat = path.read_bytes(), path.stat()
    try:
        path.write_bytes(data + PROBE.encode())
        after = {"dvc": dvc_stale(root), "snakemake": snakemake_planned(root)}
        return {tool: sorted(set(after[tool]) - set(before[tool])) for tool in after}
    finally:
        path.write_bytes(data)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def source_counts(dvc_yaml: str) -> dict[str, int]:
    """Stage -> number of source files among its dependencies in a dvc.yaml (through its code
    stamp: the files on the stamp step's command line)."""
    stages = yaml.safe_load(dvc_yaml)["stages"]
    counts = {}
    for name, entry in stages.items():
        body = entry.get("do", entry)
        if name.startswith("code_"):
            counts[stamped(name)] = sum(
                1 for word in body["cmd"].split() if word.startswith("src/")
            )
        else:
            found = sum(1 for dep in body.get("deps", []) if str(dep).startswith("src/"))
            counts.setdefault(name, found)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--root", type=Path, default=Path("."), help="a built checkout (default: here)"
    )
    parser.add_argument(
        "--edit",
        action="append",
        default=None,
        help="a file to edit (repeatable; default: the five of the docs)",
    )
    parser.add_argument(
        "--before", default=None, help="a git revision whose dvc.yaml the counts are compared with"
    )
    parser.add_argument("--json", type=Path, default=None, help="write the lists and counts here")
    args = parser.parse_args()
    root = args.root.resolve()
    idle = {"dvc": dvc_stale(root), "snakemake": snakemake_planned(root)}
    if idle["dvc"] or idle["snakemake"]:
        print(f"not idle before any edit; the lists below are what each edit adds: {idle}")
    found = {
        "idle": idle,
        "edits": {e: stale_after_edit(root, e, idle) for e in (args.edit or EDITS)},
    }
    found["sources_now"] = source_counts((root / "dvc.yaml").read_text())
    if args.before:
        found["sources_before"] = source_counts(
            run(["git", "show", f"{args.before}:dvc.yaml"], root)
        )
    for edit, lists in found["edits"].items():
        print(
            f"{edit}\n  dvc status:   {', '.join(lists['dvc']) or '-'}\n"
            f"  snakemake -n: {', '.join(lists['snakemake']) or '-'}"
        )
    print("\nsource files per stage" + (f" ({args.before} -> now)" if args.before else ""))
    for stage, count in found["sources_now"].items():
        before = found.get("sources_before", {}).get(stage)
        print(f"  {stage:24s} {'' if before is None else f'{before:3d} -> '}{count:3d}")
    if args.json:
        args.json.write_text(json.dumps(found, indent=2) + "\n")


if __name__ == "__main__":
    main()
