"""`vlstress published-check`: one model's clean top-1 on every zero-shot test set beside the
published number (open_clip's zero-shot table, imagenet-testbed's for timm models).

One record per test set (task `published-check`: run_top1, published_top1, diff_pp,
tolerance_pp, flagged), written as one file; a model or set without a published number gets its
record too, with the reason (vlstress.suites.zeroshot.published).
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--params",
        action="append",
        required=True,
        type=Path,
        help="params file(s): which test sets the run evaluates",
    )
    parser.add_argument("--model", required=True, help="model slug (key of `models`)")
    parser.add_argument(
        "--tolerance",
        type=float,
        required=True,
        help="points |run - published| may differ by under the published protocol",
    )
    parser.add_argument(
        "--protocol-tolerance",
        type=float,
        required=True,
        help="the same where the classifier differs (templates other than openai, own class "
        "names, a timm model on ObjectNet)",
    )
    parser.add_argument(
        "--timm-names",
        type=Path,
        default=None,
        help="imagenet-testbed to timm name map (default: the shipped testbed_timm_names.csv)",
    )
    parser.add_argument("--out", required=True, type=Path, help="records to write (JSON array)")


def run(args: argparse.Namespace) -> None:
    from vlstress.errors import VlstressError
    from vlstress.params import Params
    from vlstress.record import write_records
    from vlstress.suites.zeroshot import paths
    from vlstress.suites.zeroshot.published import check_model

    if args.tolerance < 0 or args.protocol_tolerance < args.tolerance:
        raise VlstressError(
            f"--tolerance {args.tolerance} must be >= 0 and --protocol-tolerance "
            f"{args.protocol_tolerance} at least as large"
        )
    evaluations = [
        (Path(path.replace("{model}", args.model)), Path(folder))
        for path, folder in paths.record_evaluations(Params.load(args.params))
    ]
    records = check_model(evaluations, args.tolerance, args.protocol_tolerance, args.timm_names)
    write_records(args.out, records)
    for rec in records:
        m = rec.metrics
        if m["flagged"]:
            log.warning(
                "%s on %s: top-1 %.2f, published %.2f (%+.2f points, tolerance %.2f)",
                args.model,
                rec.dataset["name"],
                m["run_top1"],
                m["published_top1"],
                m["diff_pp"],
                m["tolerance_pp"],
            )
