"""`vlstress shape-bias`: one model's shape bias on the cue-conflict stimuli, from the embeddings
and 16-category classifier its zero-shot jobs wrote (vlstress.suites.shape_bias.run).

Records (task `shape_bias`, one per condition {category}: `all`, then each shape category) go to
--out, every stimulus with its decision to the sidecar <out>.json.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--testset", required=True, type=Path, help="the stimuli (`vlstress cue-conflict`)"
    )
    parser.add_argument(
        "--image-emb", required=True, type=Path, help="their image embeddings (one model)"
    )
    parser.add_argument(
        "--classifier", required=True, type=Path, help="the 16-category classifier (same model)"
    )
    parser.add_argument(
        "--out", required=True, type=Path, help="records file (decisions in <out>.json)"
    )


def run(args: argparse.Namespace) -> None:
    from vlstress.io import sidecar, write_json
    from vlstress.outcomes import outcomes_path, write_outcomes
    from vlstress.record import write_records
    from vlstress.suites.shape_bias.run import evaluate

    records, decisions, outcomes = evaluate(args.testset, args.image_emb, args.classifier)
    overall = records[0].metrics

    def share(value: float | None) -> str:
        return "undefined" if value is None else f"{value:.3g}"

    log.info(
        "%s: shape bias %s over %d cue-conflict stimuli (decisions: shape %s%%, texture %s%%)",
        records[0].model.get("slug"),
        share(overall["shape_bias"]),
        overall["n_conflict"],
        share(overall["shape_decisions"]),
        share(overall["texture_decisions"]),
    )
    write_records(args.out, records)
    write_json(sidecar(args.out), decisions)
    write_outcomes(outcomes_path(args.out), outcomes)
