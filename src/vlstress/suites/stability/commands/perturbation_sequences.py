"""`vlstress perturbation-sequences`: ImageNet-P style sequences of one perturbation for a seeded
sample of a classification test set.

`--source generate` makes the frames; a folder reads the released ImageNet-P videos of the sampled
images instead (vlstress.suites.stability.sequences.read_released). Writes
OUT/<sequence>/<frame>.png and OUT/manifest.json (entries keep `label` and add `sequence`,
`frame`, `source_path`). See vlstress.suites.stability.perturbations for the 14 perturbations and
what differs from the released ImageNet-P videos.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from vlstress.argtypes import optional_int


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--manifest", required=True, type=Path, help="the clean test set's folder")
    parser.add_argument("--perturbation", required=True, help="a perturbation (PERTURBATIONS)")
    parser.add_argument(
        "--source",
        default="generate",
        help="generate | the folder of the released ImageNet-P videos",
    )
    parser.add_argument(
        "--n-images", type=optional_int, default=None, help="a seeded sample (None = all)"
    )
    parser.add_argument("--seed", type=int, default=0, help="sample and noise seed")
    parser.add_argument("--size", type=int, default=224, help="frame side (ImageNet-P: 224)")
    parser.add_argument("--difficulty", type=int, default=1, help="1-3 (noise strength)")
    parser.add_argument("--workers", type=int, default=0, help="processes (0 = all cores)")
    parser.add_argument("--out", required=True, type=Path, help="output folder")


def run(args: argparse.Namespace) -> None:
    from vlstress import provenance
    from vlstress.io import sha256_file
    from vlstress.suites.corruptions.versions import library_versions
    from vlstress.suites.stability import sequences
    from vlstress.suites.stability.perturbations import check, check_difficulty
    from vlstress.testsets.manifest import load, manifest_path

    check(args.perturbation)  # before any image is read
    check_difficulty(args.difficulty)
    clean = load(args.manifest)

    params = {
        "source": args.source,
        "perturbation": args.perturbation,
        "n_images": args.n_images,
        "size": args.size,
        "difficulty": args.difficulty,
    }
    block = provenance.build(
        "perturbation-sequences",
        params,
        seed=args.seed,
        inputs={str(args.manifest): sha256_file(manifest_path(args.manifest))},
    )
    block["libraries"] = library_versions()
    if args.source != "generate":
        sequences.read_released(
            clean,
            args.perturbation,
            Path(args.source),
            n_images=args.n_images,
            seed=args.seed,
            size=args.size,
            difficulty=args.difficulty,
            out_dir=args.out,
            provenance=block,
        )
        return
    sequences.generate(
        clean,
        args.perturbation,
        n_images=args.n_images,
        seed=args.seed,
        size=args.size,
        difficulty=args.difficulty,
        out_dir=args.out,
        workers=args.workers,
        provenance=block,
    )
