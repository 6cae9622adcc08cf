"""`vlstress assistant-options`: the multiple-choice questions of one test set, each image's options
being its true class and the classes a classifier confused it with most (from that model's
zero-shot embeddings and classifier), in a seeded order (vlstress.suites.assistant.questions)."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from vlstress.argtypes import positive_int, seed_int
from vlstress.suites.assistant.names import FORMATS

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--testset", required=True, type=Path, help="the test set (`vlstress testset`)"
    )
    parser.add_argument(
        "--image-emb", required=True, type=Path, help="its image embeddings (the options' model)"
    )
    parser.add_argument(
        "--classifier", required=True, type=Path, help="its zero-shot classifier (same model)"
    )
    parser.add_argument(
        "--options", required=True, type=positive_int, help="options per question (>= 2)"
    )
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="letters",
        help="letters (LLaVA's lettered multiple choice), imagenet-d (ImageNet-D's question and "
        "scoring) or imagenet-d-strict (its question, read strictly)",
    )
    parser.add_argument("--seed", type=seed_int, default=0, help="seed of the options' order")
    parser.add_argument("--out", required=True, type=Path, help="questions JSON to write")


def run(args: argparse.Namespace) -> None:
    from vlstress.io import write_json
    from vlstress.suites.assistant.run import build_questions

    found = build_questions(
        args.testset, args.image_emb, args.classifier, args.options, args.seed, args.format
    )
    log.info(
        "%s: %d questions of %d options (wrong options: %s's top confusions)",
        found["testset"],
        len(found["questions"]),
        found["n_options"],
        found["options_from"]["slug"],
    )
    write_json(args.out, found)
