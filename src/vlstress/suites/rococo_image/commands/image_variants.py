"""`vlstress image-variants`: one perturbed-image variant (method, lam, seed) of the test set.

Writes OUT/manifest.json (entries {image, path, image_id, caption, partner, partner_index,
box, ...}, the variant spec and provenance) and, in faithful mode, OUT/images/*.jpg:
vlstress.suites.rococo_image.variant_folder. See vlstress.suites.rococo_image.variants for the
perturbations and the two modes.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from vlstress.argtypes import seed_int
from vlstress.suites.rococo_image import variant_folder, variants


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--manifest", required=True, type=Path, help="manifest from `vlstress prepare`"
    )
    parser.add_argument(
        "--method",
        required=True,
        choices=sorted(variants.PERTURBATIONS),
        help=variant_folder.method_help(),
    )
    parser.add_argument(
        "--lam", required=True, help="share of the original image kept, in [0, 1] (e.g. 0.9)"
    )
    parser.add_argument(
        "--seed", required=True, type=seed_int, help="variant seed: partners and boxes"
    )
    variant_folder.add_mode_arguments(parser)
    parser.add_argument(
        "--out",
        required=True,
        type=Path,
        help="variant folder to write (manifest.json [+ images/])",
    )


def run(args: argparse.Namespace) -> None:
    spec = variant_folder.variant_spec(
        args.method, args.lam, args.seed, args.mode, args.size, args.jpeg_quality
    )
    variant_folder.write_variant(args.manifest, spec, args.out)
