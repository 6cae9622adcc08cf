"""`vlstress typographic`: a typographic attack on a classification test set (a wrong class name
written on each image).

Writes OUT/images/<index>.png and OUT/manifest.json (a classification manifest whose entries
keep `label` and add `written`, the drawn style and `source_path`; root = OUT).
See vlstress.suites.typographic.overlay for the draws and the font.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from vlstress.argtypes import seed_int
from vlstress.suites.corruptions.flags import add_size_argument


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--manifest",
        required=True,
        type=Path,
        help="clean test-set folder of `vlstress testset` (or its manifest.json)",
    )
    parser.add_argument(
        "--seed",
        required=True,
        type=seed_int,
        help="attack seed: written class, font size, colours, position",
    )
    add_size_argument(parser)
    parser.add_argument(
        "--out", required=True, type=Path, help="folder to write (manifest.json + images/)"
    )


def run(args: argparse.Namespace) -> None:
    from vlstress.suites.typographic import overlay as typographic
    from vlstress.suites.typographic.versions import provenance_block
    from vlstress.testsets.manifest import load

    clean = load(args.manifest)
    block = provenance_block(args.manifest, args.size, args.seed)
    typographic.generate(clean, args.seed, args.out, size=args.size, provenance=block)
