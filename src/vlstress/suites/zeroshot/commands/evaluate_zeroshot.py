"""`vlstress evaluate-zeroshot`: zero-shot classification metrics of one model on one test set.

The record (task `zeroshot`, `corruption` or `typographic`) holds top-1, top-5, mean per-class
recall and, given the clean test set's record, the clean accuracy and the drop; a typographic
set adds the attack success rate (vlstress.suites.zeroshot.evaluation). The record's sidecar
(`<record>.json` + `.json`) holds the per-class accuracy; its outcomes file
(`<record>.outcomes.npz`, vlstress.outcomes) each image's outcome.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from vlstress.argtypes import int_list
from vlstress.suites.zeroshot import evaluation


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--testset",
        required=True,
        type=Path,
        help="test-set folder (or manifest) the embeddings were computed on",
    )
    parser.add_argument(
        "--image-emb",
        required=True,
        type=Path,
        help="testsets/<set>.npy of `vlstress embed-zeroshot --sets images`",
    )
    parser.add_argument(
        "--classifier",
        required=True,
        type=Path,
        help="<set>.npy of `vlstress embed-zeroshot --sets classifiers` (same model and classes)",
    )
    evaluation.add_condition_arguments(parser)
    parser.add_argument(
        "--ks", type=int_list, default=[1, 5], help="top-k accuracies, comma-separated"
    )
    parser.add_argument(
        "--out",
        required=True,
        type=Path,
        help=(
            "record to write (per-class sidecar: <out>.json; per-image outcomes: "
            "<out stem>.outcomes.npz)"
        ),
    )


def run(args: argparse.Namespace) -> None:
    found = evaluation.evaluate(
        args.testset,
        args.image_emb,
        args.classifier,
        task=args.task,
        corruption=args.corruption,
        severity=args.severity,
        clean_record=args.clean_record,
        ks=args.ks,
    )
    found.write(args.out)
