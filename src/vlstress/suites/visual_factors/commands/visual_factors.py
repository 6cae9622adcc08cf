"""`vlstress visual-factors`: one model's top-1 and error ratio per ImageNet-X factor, from the
embeddings and classifier of an ImageNet val test set (vlstress.suites.visual_factors.run).

Records (task `visual_factors`, one per condition {factor}: `all`, then the 16 factors) go to
--out, every annotated image with its label and prediction to the sidecar <out>.json, and one
block of per-image outcomes per record to <out stem>.outcomes.npz (an error ratio's bootstrap).
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from vlstress.argtypes import boolean

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--testset", required=True, type=Path, help="ImageNet val test set")
    parser.add_argument("--image-emb", required=True, type=Path, help="its image embeddings")
    parser.add_argument("--classifier", required=True, type=Path, help="its zero-shot classifier")
    parser.add_argument(
        "--annotations", choices=("top", "multi"), default="top", help="ImageNet-X factor table"
    )
    parser.add_argument(
        "--filter-prototypes", type=boolean, default=True, help="leave out prototypical images"
    )
    parser.add_argument(
        "--complete",
        type=boolean,
        default=True,
        help="every annotated image must be in the test set (false: score a subset)",
    )
    parser.add_argument(
        "--out", required=True, type=Path, help="records (predictions in <out>.json)"
    )


def run(args: argparse.Namespace) -> None:
    from vlstress.io import sidecar, write_json
    from vlstress.outcomes import outcomes_path, write_outcomes
    from vlstress.record import write_records
    from vlstress.suites.visual_factors.run import evaluate

    records, predictions, outcomes = evaluate(
        args.testset,
        args.image_emb,
        args.classifier,
        which=args.annotations,
        filter_prototypes=args.filter_prototypes,
        complete=args.complete,
    )
    worst = max(
        (r for r in records[1:] if r.metrics["error_ratio"] is not None),
        key=lambda r: r.metrics["error_ratio"],
        default=None,
    )
    log.info(
        "%s: top-1 %.1f%% on %d annotated images%s",
        records[0].model.get("slug"),
        records[0].metrics["top1"],
        records[0].metrics["n_images"],
        ""
        if worst is None
        else f"; hardest factor {worst.condition['factor']} (error ratio "
        f"{worst.metrics['error_ratio']:.2f})",
    )
    write_records(args.out, records)
    write_json(sidecar(args.out), predictions)
    write_outcomes(outcomes_path(args.out), outcomes)
