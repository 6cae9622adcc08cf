"""`vlstress choose-option`: a classifier's answers to the multiple-choice questions of a test set
(the option of highest zero-shot score), scored as the assistants' are (vlstress.suites.assistant).
The record goes to --out, every question with the option chosen to the sidecar <out>.json."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--testset", required=True, type=Path, help="the test set")
    parser.add_argument("--image-emb", required=True, type=Path, help="its image embeddings")
    parser.add_argument("--classifier", required=True, type=Path, help="its zero-shot classifier")
    parser.add_argument(
        "--questions", required=True, type=Path, help="`vlstress assistant-options` of the set"
    )
    parser.add_argument("--out", required=True, type=Path, help="record (choices in <out>.json)")


def run(args: argparse.Namespace) -> None:
    from vlstress.io import sidecar, write_json
    from vlstress.outcomes import outcomes_path, write_outcomes
    from vlstress.record import write_record
    from vlstress.suites.assistant.run import choose

    record, choices, outcomes = choose(
        args.testset, args.image_emb, args.classifier, args.questions
    )
    log.info(
        "%s on %s: %.1f%% of %d questions right among %s options",
        record.model["slug"],
        record.dataset["name"],
        record.metrics["accuracy"],
        record.metrics["n_questions"],
        record.condition["options"],
    )
    write_record(args.out, record)
    write_json(sidecar(args.out), choices)
    write_outcomes(outcomes_path(args.out), [outcomes])
