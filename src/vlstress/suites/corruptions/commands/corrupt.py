"""`vlstress corrupt`: one ImageNet-C style corruption of a classification test set, at chosen
severities.

Writes OUT/s<severity>/<index>.png and OUT/manifest.json (a classification manifest whose
entries keep `label` and add `severity` and `source_path`; root = OUT). Files do not depend
on --workers or --chunk-size. See vlstress.suites.corruptions.imagenet_c for seeds, sizes and
formats, and vlstress.suites.corruptions.flags for the flags. With `--source <folder>` nothing is
corrupted: the manifest lists the released ImageNet-C files of the test set's images in place.
"""

from __future__ import annotations

import argparse

from vlstress.suites.corruptions import flags
from vlstress.suites.corruptions import imagenet_c as corruptions


def add_arguments(parser: argparse.ArgumentParser) -> None:
    flags.add_corrupt_arguments(parser)


def run(args: argparse.Namespace) -> None:
    from vlstress.suites.corruptions.versions import provenance_block
    from vlstress.testsets.manifest import load

    clean = load(args.manifest)
    params = {
        "corruption": args.corruption,
        "severities": args.severities,
        "size": args.size,
        "format": args.fmt,
    }
    released = args.source != "generate"
    block = provenance_block(
        args.manifest, {**params, **({"source": args.source} if released else {})}, args.seed
    )
    if released:  # the released ImageNet-C files, read in place
        corruptions.read_released(
            clean, args.corruption, args.severities, args.source, args.out, block
        )
        return
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
