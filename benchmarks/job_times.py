"""The fixed cost per job of a workflow run, from Snakemake's per-job benchmark files.

Every rule writes `logs/benchmarks/<stage>[/<wildcards>].tsv` (seconds, max RSS); this sums them
per stage kind: jobs, job-seconds, mean and max RSS (a step that imports torch has ~400 MB or
more), and the whole run's sum of job times beside its wall time (Snakemake's log, "Elapsed
time"). Run it on a checkout after `make demo` (or a fresh clone's `.ci/run`):

    python benchmarks/job_times.py --root . --wall 559 --tag after
"""

from __future__ import annotations

import argparse
import csv
import json
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def job_times(root: Path) -> dict[str, list[tuple[float, float]]]:
    """Stage kind -> (seconds, max RSS in MB) of each of its jobs."""
    found: dict[str, list[tuple[float, float]]] = defaultdict(list)
    base = root / "logs" / "benchmarks"
    for path in sorted(base.rglob("*.tsv")):
        rows = list(csv.DictReader(path.open(), delimiter="\t"))
        if not rows:
            continue
        kind = path.relative_to(base).parts[0].removesuffix(".tsv")
        found[kind].append((float(rows[-1]["s"]), float(rows[-1]["max_rss"])))
    return dict(found)


def summary(root: Path, wall: float | None) -> dict:
    kinds = job_times(root)
    rows = [
        {
            "stage": kind,
            "jobs": len(jobs),
            "job_s": round(sum(s for s, _ in jobs), 1),
            "mean_s": round(sum(s for s, _ in jobs) / len(jobs), 2),
            "max_rss_mb": round(max(rss for _, rss in jobs)),
        }
        for kind, jobs in kinds.items()
    ]
    rows.sort(key=lambda row: -row["job_s"])
    return {
        "jobs": sum(row["jobs"] for row in rows),
        "job_s": round(sum(row["job_s"] for row in rows), 1),
        "wall_s": wall,
        "stages": rows,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="a checkout after a run")
    parser.add_argument("--wall", type=float, default=None, help="the run's wall time (s)")
    parser.add_argument("--tag", default="", help="suffix of the result file")
    parser.add_argument(
        "--out", type=Path, default=None, help="default: benchmarks/results/job_times[-TAG].json"
    )
    args = parser.parse_args(argv)
    result = summary(args.root, args.wall)
    name = f"job_times{'-' + args.tag if args.tag else ''}.json"
    out = args.out or ROOT / "benchmarks" / "results" / name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"{result['jobs']} jobs, {result['job_s']} job-s, wall {result['wall_s']} s -> {out}")


if __name__ == "__main__":
    main()
