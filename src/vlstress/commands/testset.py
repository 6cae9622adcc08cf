"""`vlstress testset`: the labelled manifest of one classification test set.

Writes <out>/manifest.json (vlstress.testsets.manifest), plus <out>/images/ for the
kinds that produce their images (CIFAR, COCO object crops, the demo). The folder appears
only when everything succeeded. Paths in the manifest stay as given on the command line
(a relative --root stays relative), so the manifest is the same wherever the project lives.
The work: vlstress.testsets.testset_folder.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from vlstress.testsets import testset_folder

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from vlstress.testsets.kinds import KINDS

    parser.add_argument("--name", required=True, help="test-set name recorded in the manifest")
    parser.add_argument(
        "--kind",
        required=True,
        choices=list(KINDS),
        help="test-set kind (vlstress.testsets.kinds)",
    )
    testset_folder.add_option_arguments(parser)
    parser.add_argument(
        "--disjoint-from",
        type=Path,
        default=None,
        help="a test-set folder this set must share no class with (an OOD set and its ID set)",
    )
    parser.add_argument(
        "--out",
        required=True,
        type=Path,
        help="test-set folder to create (manifest.json [+ images/])",
    )


def run(args: argparse.Namespace) -> None:
    data = testset_folder.write_testset(
        args.out,
        name=args.name,
        kind=args.kind,
        options=testset_folder.option_values(args),
        keep=args.keep,
        drop=args.drop,
        disjoint_from=args.disjoint_from,
    )
    log.info(
        "wrote %s: %d images, %d classes (%s)",
        args.out,
        len(data.images),
        len(data.classes),
        args.kind,
    )
