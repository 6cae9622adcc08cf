"""`vlstress evaluate-stability`: flip probability and top-5 distance of one model on every
perturbation's sequences (the params' `stability.perturbations`), one job per model, one record
per perturbation in one file, and beside it their per-sequence outcomes
(`<records>.outcomes.npz`). Every perturbation is scored before anything is written.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--params",
        action="append",
        required=True,
        type=Path,
        help="params file(s): which perturbations the run evaluates",
    )
    parser.add_argument("--model", required=True, help="model slug (key of `models`)")
    parser.add_argument("--out", required=True, type=Path, help="records file (a JSON array)")


def run(args: argparse.Namespace) -> None:
    from vlstress.outcomes import outcomes_path, write_outcomes
    from vlstress.params import Params
    from vlstress.record import write_records
    from vlstress.suites.stability.paths import evaluations
    from vlstress.suites.stability.perturbations import PERTURBATIONS
    from vlstress.suites.stability.run import evaluate

    scored = [
        evaluate(e.for_model(args.model), noise=PERTURBATIONS[e.condition["perturbation"]].noise)
        for e in evaluations(Params.load(args.params))
    ]
    write_records(args.out, [record for record, _ in scored])
    write_outcomes(outcomes_path(args.out), [outcomes for _, outcomes in scored])
