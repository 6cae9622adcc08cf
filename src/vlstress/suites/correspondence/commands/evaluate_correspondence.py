"""`vlstress evaluate-correspondence`: dense correspondence of one model's frozen image tower on one
set's pairs (Probe3D's protocol for the set's kind: vlstress.suites.correspondence.evaluation).

Writes one file of records (task `correspondence`): one for all pairs (recall at every threshold)
and one per rotation bin (SPair-71k: viewpoint-variation bucket) with the recall at the binned
threshold, and the per-pair outcomes beside it (`.outcomes.npz`: BCa intervals over the pairs).
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from vlstress.embedding.flags import add_model_arguments

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pairs",
        required=True,
        type=Path,
        help="the set's folder of `vlstress correspondence-pairs` (pairs.json, protocol.json)",
    )
    add_model_arguments(parser)
    parser.add_argument("--out", required=True, type=Path, help="the records' file")


def run(args: argparse.Namespace) -> None:
    from vlstress.outcomes import outcomes_path, write_outcomes
    from vlstress.record import write_records
    from vlstress.suites.correspondence.evaluation import evaluate

    evaluated = evaluate(args)
    write_records(args.out, evaluated.records)
    write_outcomes(outcomes_path(args.out), evaluated.outcomes)
    for record in evaluated.records:
        log.info(
            "%s %s bin %s: recall %.1f%%",
            record.model["slug"],
            record.condition["set"],
            record.condition["bin"],
            record.metrics["recall"] if record.metrics["recall"] is not None else float("nan"),
        )
