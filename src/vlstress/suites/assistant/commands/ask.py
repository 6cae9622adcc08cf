"""`vlstress ask`: an assistant's (LLaVA's) answers to the multiple-choice questions of a test set,
generated greedily in batches (on the GPU when there is one) and read as the questions' format
says (strictly, or as ImageNet-D scores them): an answer that names no single option is scored
wrong and counted as unparseable (vlstress.suites.assistant.answers).
The record goes to --out, every question with the reply and the option it names to <out>.json."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from vlstress.argtypes import positive_int

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model-card",
        required=True,
        type=Path,
        help="the assistant's card (`vlstress model-card`)",
    )
    parser.add_argument("--testset", required=True, type=Path, help="the test set")
    parser.add_argument(
        "--questions", required=True, type=Path, help="`vlstress assistant-options` of the set"
    )
    parser.add_argument("--question", required=True, help="the question before the options")
    parser.add_argument(
        "--max-new-tokens", type=positive_int, default=8, help="the longest answer (tokens)"
    )
    parser.add_argument("--batch-size", type=positive_int, default=8, help="questions per call")
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N")
    parser.add_argument("--threads", type=positive_int, default=2, help="torch CPU threads")
    parser.add_argument(
        "--precision", default="fp32", help="fp32 | amp (weights in bf16/fp16 on CUDA)"
    )
    parser.add_argument("--out", required=True, type=Path, help="record (answers in <out>.json)")


def run(args: argparse.Namespace) -> None:
    from vlstress.io import sidecar, write_json
    from vlstress.outcomes import outcomes_path, write_outcomes
    from vlstress.record import write_record
    from vlstress.suites.assistant.run import ask

    record, replies, outcomes = ask(
        args.model_card,
        args.testset,
        args.questions,
        question=args.question,
        max_new_tokens=args.max_new_tokens,
        batch_size=args.batch_size,
        device=args.device,
        threads=args.threads,
        precision=args.precision,
    )
    log.info(
        "%s on %s: %.1f%% of %d questions right, %.1f%% unparseable",
        record.model["slug"],
        record.dataset["name"],
        record.metrics["accuracy"],
        record.metrics["n_questions"],
        record.metrics["unparseable"],
    )
    write_record(args.out, record)
    write_json(sidecar(args.out), replies)
    write_outcomes(outcomes_path(args.out), [outcomes])
