"""The flags of `vlstress corrupt`, and `--size`, which `vlstress typographic` shares (the same
ImageNet-C crop of the clean images)."""

from __future__ import annotations

import argparse
from pathlib import Path

from vlstress.argtypes import int_list, positive_int, seed_int
from vlstress.suites.corruptions import imagenet_c as corruptions


def size_arg(value: str) -> int:
    """`--size`: 0 (keep the original size) or a side >= 32."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer size, got {value!r}") from None
    if number != 0 and number < corruptions.MIN_SIDE:
        raise argparse.ArgumentTypeError(
            f"size must be 0 (original size) or >= {corruptions.MIN_SIDE}, got {value!r}"
        )
    return number


def workers_arg(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of workers, got {value!r}") from None
    if number < 0:
        raise argparse.ArgumentTypeError(f"workers must be >= 0 (0 = every core), got {value!r}")
    return number


def add_size_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--size",
        type=size_arg,
        default=corruptions.DEFAULT_SIZE,
        help=(
            "ImageNet-C crop: shorter side to 256*SIZE/224, centre crop SIZExSIZE (224 = "
            "ImageNet-C); 0 = original size"
        ),
    )


def add_corrupt_arguments(parser: argparse.ArgumentParser) -> None:
    """Every flag of `vlstress corrupt`."""
    parser.add_argument(
        "--manifest",
        required=True,
        type=Path,
        help="clean test-set folder of `vlstress testset` (or its manifest.json)",
    )
    parser.add_argument(
        "--corruption",
        required=True,
        choices=list(corruptions.CORRUPTIONS),
        help="; ".join(
            f"{family}: {', '.join(n for n, f in corruptions.CORRUPTIONS.items() if f == family)}"
            for family in dict.fromkeys(corruptions.CORRUPTIONS.values())
        ),
    )
    parser.add_argument(
        "--severities",
        type=int_list,
        default=[1, 2, 3, 4, 5],
        help="comma-separated severities in 1..5",
    )
    parser.add_argument(
        "--seed",
        required=True,
        type=seed_int,
        help="corruption seed (per image: hashed with the image path)",
    )
    add_size_argument(parser)
    parser.add_argument(
        "--format",
        dest="fmt",
        choices=list(corruptions.FORMATS),
        default="png",
        help="png (lossless) or jpeg (quality 85, as ImageNet-C)",
    )
    parser.add_argument(
        "--workers",
        type=workers_arg,
        default=0,
        help="worker processes (0 = every core of the node)",
    )
    parser.add_argument(
        "--chunk-size", type=positive_int, default=64, help="images per task of a worker"
    )
    parser.add_argument(
        "--source",
        default="generate",
        help=(
            "generate (corrupt the images) or the folder of the released ImageNet-C "
            "(<corruption>/<severity>/<wnid>/<file>.JPEG): its files of the test set's images are "
            "listed in place (the test set must be ImageNet val, kind imagenet)"
        ),
    )
    parser.add_argument(
        "--out", required=True, type=Path, help="folder to write (manifest.json + s<severity>/)"
    )
