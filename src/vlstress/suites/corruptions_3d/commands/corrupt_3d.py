"""`vlstress corrupt-3d`: one 3D Common Corruption of a classification test set, at chosen
severities.

Generated (near_focus, far_focus, fog_3d; color_quant, low_light, iso_noise): writes
OUT/s<severity>/<index>.png and OUT/manifest.json, whose source names the depth used (or the seed
of a noise; vlstress.suites.corruptions_3d.generate).
With `--source <folder>` nothing is corrupted: the manifest lists the released ImageNet-3DCC files
of the test set's images in place (vlstress.suites.corruptions_3d.released).
"""

from __future__ import annotations

import argparse

from vlstress.suites.corruptions_3d import flags


def add_arguments(parser: argparse.ArgumentParser) -> None:
    flags.add_corrupt_arguments(parser)


def run(args: argparse.Namespace) -> None:
    from vlstress import provenance
    from vlstress.io import sha256_file
    from vlstress.suites.corruptions_3d import generate, released
    from vlstress.testsets.manifest import load, manifest_path

    clean = load(args.manifest)
    generating = args.source == "generate"
    params = {
        "corruption": args.corruption,
        "severities": args.severities,
        "size": args.size,
        "seed": args.seed,
        **(
            {"depth": args.depth, "depth_encoding": args.depth_encoding}
            if generating
            else {"source": args.source}
        ),
    }
    block = provenance.build(
        "corrupt-3d",
        params,
        inputs={str(args.manifest): sha256_file(manifest_path(args.manifest))},
        packages=("scipy",),
    )
    if not generating:
        released.read_released(
            clean, args.corruption, args.severities, args.source, args.out, block
        )
        return
    generate.generate(
        clean,
        args.corruption,
        args.severities,
        args.out,
        depth=args.depth,
        encoding=args.depth_encoding,
        size=args.size,
        seed=args.seed,
        workers=args.workers,
        provenance=block,
    )
