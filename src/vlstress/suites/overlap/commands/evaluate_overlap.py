"""`vlstress evaluate-overlap`: a model's top-1 on the overlapping and the clean subset of every
test set of `overlap.testsets` (one record each, one file), by the detector's flags, and their
per-image outcomes beside them."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--params", action="append", required=True, type=Path, help="params")
    parser.add_argument("--model", required=True, help="model slug (key of `models`)")
    parser.add_argument("--detected", required=True, type=Path, help="overlap-detect's output")
    parser.add_argument("--out", required=True, type=Path, help="records file (a JSON array)")


def run(args: argparse.Namespace) -> None:
    from vlstress.io import read_json
    from vlstress.outcomes import outcomes_path, write_outcomes
    from vlstress.params import Params
    from vlstress.record import write_records
    from vlstress.suites.overlap.evaluation import evaluate
    from vlstress.suites.overlap.paths import evaluations

    detected = read_json(args.detected, "overlap detection")
    found = [
        evaluate(e.for_model(args.model), detected, args.detected)
        for e in evaluations(Params.load(args.params))
    ]
    write_records(args.out, [record for record, _ in found])
    write_outcomes(outcomes_path(args.out), [outcomes for _, outcomes in found])
