"""`vlstress ei-scores`: embedding influence EI(w, c) = 1 - cos(f(c), f(c without w)) of every word.

For every caption of the manifest and every word position (pure-punctuation tokens
skipped) the scorer model's text encoder embeds the caption and the caption with that
word deleted. Output: JSON, manifest order, EI rounded to 6 decimals; its layout:
vlstress.suites.rococo_text.ei_file.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from vlstress.argtypes import positive_int
from vlstress.embedding.flags import add_model_arguments
from vlstress.io import write_json
from vlstress.suites.rococo_text.ei_file import ei_document


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--manifest", required=True, type=Path, help="from `vlstress prepare`")
    add_model_arguments(parser)
    parser.add_argument(
        "--block-size",
        type=positive_int,
        default=512,
        help=(
            "captions encoded per block together with their deletion variants (memory vs. batching)"
        ),
    )
    parser.add_argument(
        "--out", required=True, type=Path, help="JSON to write, e.g. results/text/ei_scores.json"
    )


def run(args: argparse.Namespace) -> None:
    write_json(args.out, ei_document(args.manifest, args, block_size=args.block_size))
