"""`vlstress evaluate-image`: text-to-image metrics of one model on one perturbed-image variant.

Gallery = all original images + all perturbed images of the variant; each caption's ground
truth is its own original image. Writes one metric record (task "image-stress", condition
{"perturbation", "lam", "seed"}) per (model, variant): vlstress.suites.rococo_image.evaluation;
beside it, its outcomes file (`<record stem>.outcomes.npz`, vlstress.outcomes) each caption's
outcome.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from vlstress.outcomes import outcomes_path, write_outcomes
from vlstress.record import write_record
from vlstress.retrieval_flags import add_ranking_arguments
from vlstress.suites.rococo_image import evaluation


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--manifest", required=True, type=Path, help="manifest of the original test set"
    )
    parser.add_argument(
        "--image-emb",
        required=True,
        type=Path,
        help="original images: images.npy of `vlstress embed-retrieval`",
    )
    parser.add_argument(
        "--text-emb",
        required=True,
        type=Path,
        help="captions of the manifest: texts.npy of `vlstress embed-retrieval`",
    )
    parser.add_argument(
        "--variant", required=True, type=Path, help="variant folder from `vlstress image-variants`"
    )
    parser.add_argument(
        "--variant-emb",
        required=True,
        type=Path,
        help="image_variants/<variant>.npy of `vlstress embed-retrieval`",
    )
    add_ranking_arguments(parser, "caption rows")
    parser.add_argument(
        "--out",
        required=True,
        type=Path,
        help="record to write (per-caption outcomes: <out stem>.outcomes.npz)",
    )


def run(args: argparse.Namespace) -> None:
    record, outcomes = evaluation.evaluate(
        args.manifest,
        args.image_emb,
        args.text_emb,
        args.variant,
        args.variant_emb,
        ks=args.ks,
        chunk_size=args.chunk_size,
        ties=args.ties,
    )
    write_record(args.out, record)
    write_outcomes(outcomes_path(args.out), [outcomes])
