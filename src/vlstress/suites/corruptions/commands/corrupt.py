"""`vlstress corrupt`: one ImageNet-C style corruption of a classification test set, at chosen
severities.

Writes OUT/s<severity>/<index>.png and OUT/manifest.json (a classification manifest whose
entries keep `label` and add `severity` and `source_path`; root = OUT). Files do not depend
on --workers or --chunk-size. See vlstress.images.corruptions for seeds, sizes and formats.
"""

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


def add_arguments(parser: argparse.ArgumentParser) -> None:
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
        "--out", required=True, type=Path, help="folder to write (manifest.json + s<severity>/)"
    )


def library_versions() -> dict[str, str]:
    """Versions that decide the corrupted pixels besides the common ones of provenance.build."""
    from importlib import metadata

    versions = {}
    for name in (
        "imagecorruptions-imaug",
        "opencv-python",
        "opencv-python-headless",
        "numba",
        "scipy",
    ):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return versions


def run(args: argparse.Namespace) -> None:
    from vlstress import provenance
    from vlstress.io import sha256_file
    from vlstress.testsets.manifest import load, manifest_path

    clean = load(args.manifest)
    params = {
        "corruption": args.corruption,
        "severities": args.severities,
        "size": args.size,
        "format": args.fmt,
    }
    block = provenance.build(
        "corrupt",
        params,
        seed=args.seed,
        inputs={str(args.manifest): sha256_file(manifest_path(args.manifest))},
    )
    block["packages"].update(library_versions())
    corruptions.generate(
        clean,
        args.corruption,
        args.severities,
        args.seed,
        args.out,
        size=args.size,
        fmt=args.fmt,
        workers=args.workers,
        chunk_size=args.chunk_size,
        provenance=block,
    )
