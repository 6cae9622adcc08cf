"""The flags of `vlstress corrupt-3d`."""

from __future__ import annotations

import argparse
from pathlib import Path

from vlstress.argtypes import int_list, seed_int
from vlstress.suites.corruptions.flags import add_size_argument, workers_arg
from vlstress.suites.corruptions_3d.names import (
    CORRUPTIONS,
    ENCODINGS,
    RELEASE_ONLY,
    RGB,
    RGB_DEPTH,
)


def add_corrupt_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--manifest",
        required=True,
        type=Path,
        help="clean test-set folder of `vlstress testset` (or its manifest.json)",
    )
    parser.add_argument(
        "--corruption",
        required=True,
        choices=list(CORRUPTIONS),
        help="made from the image and its depth: "
        + ", ".join(n for n, needs in CORRUPTIONS.items() if needs == RGB_DEPTH)
        + "; from the image alone: "
        + ", ".join(n for n, needs in CORRUPTIONS.items() if needs == RGB)
        + "; read from the released ImageNet-3DCC only: "
        + ", ".join(n for n, needs in CORRUPTIONS.items() if needs == RELEASE_ONLY),
    )
    parser.add_argument(
        "--severities", type=int_list, default=[1, 2, 3, 4, 5], help="comma-separated, in 1..5"
    )
    parser.add_argument(
        "--source",
        default="generate",
        help="generate, or the folder of the released ImageNet-3DCC "
        "(<corruption>/<severity>/<wnid>/<file>; the test set must be ImageNet val)",
    )
    parser.add_argument(
        "--depth",
        default="synthetic",
        help="synthetic (a labelled ramp, not measured) or a folder of 16-bit PNGs, one per test "
        "image at its relative path with the suffix .png",
    )
    parser.add_argument(
        "--depth-encoding",
        choices=list(ENCODINGS),
        default="midas-inverse",
        help="how the PNGs' values are depth (docs/3d.md)",
    )
    add_size_argument(parser)
    parser.add_argument(
        "--seed",
        type=seed_int,
        default=0,
        help="the noises of iso_noise and low_light (per image: hashed with the image path)",
    )
    parser.add_argument(
        "--workers", type=workers_arg, default=0, help="worker processes (0 = every core)"
    )
    parser.add_argument(
        "--out", required=True, type=Path, help="folder to write (manifest.json + s<severity>/)"
    )
