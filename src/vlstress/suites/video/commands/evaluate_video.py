"""`vlstress evaluate-video`: pm-0 .. pm-k of one model on every video test set of the params
(`video.testsets`) up to `--k`, one job per model, one record per test set in one file."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--params",
        action="append",
        required=True,
        type=Path,
        help="params file(s): the video test sets and k",
    )
    parser.add_argument("--model", required=True, help="model slug (key of `models`)")
    parser.add_argument(
        "--k", required=True, type=int, help="the largest frame distance scored (video.k)"
    )
    parser.add_argument("--out", required=True, type=Path, help="records file (a JSON array)")


def run(args: argparse.Namespace) -> None:
    from vlstress.errors import VlstressError
    from vlstress.outcomes import outcomes_path, write_outcomes
    from vlstress.params import Params
    from vlstress.record import write_records
    from vlstress.suites.video.paths import evaluations
    from vlstress.suites.video.run import evaluate

    if args.k < 0:
        raise VlstressError(f"--k must be >= 0, got {args.k}")
    found = evaluations(Params.load(args.params))
    evaluated = [evaluate(e.for_model(args.model), args.k) for e in found]
    write_records(args.out, [record for record, _ in evaluated])
    write_outcomes(outcomes_path(args.out), [outcomes for _, outcomes in evaluated])
