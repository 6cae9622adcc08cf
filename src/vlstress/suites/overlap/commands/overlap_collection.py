"""`vlstress overlap-collection`: list the training collection of the overlap analysis and plant
the near-duplicates that calibrate its threshold (vlstress.suites.overlap.collection)."""

from __future__ import annotations

import argparse
from pathlib import Path

from vlstress.argtypes import optional_int


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kind", required=True, choices=("folder", "shards", "embeddings"))
    parser.add_argument("--path", required=True, type=Path, help="folder, shard list or .npy")
    parser.add_argument("--max-images", type=optional_int, default=None, help="first N (None: all)")
    parser.add_argument("--planted", type=int, default=20, help="images copied per transform")
    parser.add_argument("--seed", type=int, default=0, help="which images are copied")
    parser.add_argument("--out", required=True, type=Path, help="folder to write")


def run(args: argparse.Namespace) -> None:
    import logging

    from vlstress.suites.overlap.collection import build

    body = build(args.kind, args.path, args.max_images, args.planted, args.seed, args.out)
    logging.getLogger(__name__).info(
        "%d training images, %d planted duplicates", len(body["images"]), len(body["planted"])
    )
