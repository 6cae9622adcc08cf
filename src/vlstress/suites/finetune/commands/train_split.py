"""`vlstress train-split`: the training manifest of robust fine-tuning, without any test image or
caption.

Reads a manifest made by `prepare` from the training data and the test manifest of the run;
writes the training manifest minus the test images (same COCO id or same file content) and the
test captions (vlstress.suites.finetune.split), with the counts in its provenance.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--train",
        required=True,
        type=Path,
        help="manifest of the training data (`vlstress prepare`)",
    )
    parser.add_argument(
        "--test", required=True, type=Path, help="the test manifest the suites evaluate on"
    )
    parser.add_argument("--out", required=True, type=Path, help="training manifest to write")


def run(args: argparse.Namespace) -> None:
    import logging

    from vlstress.io import write_json
    from vlstress.suites.finetune.split import training_manifest

    manifest, counts = training_manifest(args.train, args.test)
    write_json(args.out, manifest)
    logging.getLogger(__name__).info(
        "training manifest: %d of %d images (%d test images and %d test captions removed)",
        counts["kept_images"],
        counts["train_images"],
        counts["test_images_removed"],
        counts["test_captions_removed"],
    )
