"""`vlstress evaluate`: image<->text Recall@K of one model on the original captions
(vlstress.suites.retrieval.evaluation); beside the record, its outcomes file
(`<record stem>.outcomes.npz`, vlstress.outcomes) each query's outcome, both directions."""

from __future__ import annotations

import argparse
from pathlib import Path

from vlstress.outcomes import outcomes_path, write_outcomes
from vlstress.record import write_record
from vlstress.retrieval_flags import add_ranking_arguments
from vlstress.suites.retrieval import evaluation


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--manifest", required=True, type=Path)
    parser.add_argument(
        "--image-emb", required=True, type=Path, help="images.npy of `vlstress embed-retrieval`"
    )
    parser.add_argument(
        "--text-emb", required=True, type=Path, help="texts.npy of `vlstress embed-retrieval`"
    )
    add_ranking_arguments(parser, "query rows")
    parser.add_argument(
        "--out",
        required=True,
        type=Path,
        help="record to write (per-query outcomes: <out stem>.outcomes.npz)",
    )


def run(args: argparse.Namespace) -> None:
    record, outcomes = evaluation.evaluate(
        args.manifest,
        args.image_emb,
        args.text_emb,
        ks=args.ks,
        chunk_size=args.chunk_size,
        ties=args.ties,
    )
    write_record(args.out, record)
    write_outcomes(outcomes_path(args.out), [outcomes])
