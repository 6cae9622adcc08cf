"""`vlstress evaluate-text`: image-to-text metrics of one model on one caption set of the text
stress-test (gallery = all original + all altered captions; ground truth = the image's original
captions). One metric record (task "text-stress", condition {"set": <set>}) per (model, set):
vlstress.suites.rococo_text.evaluation; beside it, its outcomes file
(`<record stem>.outcomes.npz`, vlstress.outcomes) each image's outcome.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from vlstress.outcomes import outcomes_path, write_outcomes
from vlstress.record import write_record
from vlstress.retrieval_flags import add_ranking_arguments
from vlstress.suites.rococo_text import evaluation


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--manifest", required=True, type=Path, help="manifest of the original test set"
    )
    parser.add_argument(
        "--image-emb",
        required=True,
        type=Path,
        help="images of the manifest: images.npy of `vlstress embed-retrieval`",
    )
    parser.add_argument(
        "--original-emb",
        required=True,
        type=Path,
        help="captions of the manifest: texts.npy of `vlstress embed-retrieval`",
    )
    parser.add_argument(
        "--variant-captions", required=True, type=Path, help="caption set (official RoCOCO format)"
    )
    parser.add_argument(
        "--variant-emb",
        required=True,
        type=Path,
        help="the caption set: text_variants/<set>.npy of `vlstress embed-retrieval`",
    )
    parser.add_argument(
        "--set", required=True, dest="set_name", help="name of the caption set, e.g. same_concept"
    )
    add_ranking_arguments(parser, "image rows")
    parser.add_argument(
        "--out",
        required=True,
        type=Path,
        help="record to write (per-image outcomes: <out stem>.outcomes.npz)",
    )


def run(args: argparse.Namespace) -> None:
    record, outcomes = evaluation.evaluate(
        args.manifest,
        args.image_emb,
        args.original_emb,
        args.variant_captions,
        args.variant_emb,
        set_name=args.set_name,
        ks=args.ks,
        chunk_size=args.chunk_size,
        ties=args.ties,
    )
    write_record(args.out, record)
    write_outcomes(outcomes_path(args.out), [outcomes])
