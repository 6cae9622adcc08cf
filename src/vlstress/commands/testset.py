"""`vlstress testset`: the labelled manifest of one classification test set.

Writes <out>/manifest.json (vlstress.classification.manifest), plus <out>/images/ for the
kinds that produce their images (CIFAR, COCO object crops, the demo). The folder appears
only when everything succeeded. Paths in the manifest stay as given on the command line
(a relative --root stays relative), so the manifest is the same wherever the project lives.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from vlstress.argtypes import optional_int, optional_path, optional_str

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from vlstress.testsets.kinds import KINDS

    parser.add_argument("--name", required=True, help="test-set name recorded in the manifest")
    parser.add_argument(
        "--kind",
        required=True,
        choices=list(KINDS),
        help="test-set kind (see vlstress.classification.datasets)",
    )
    parser.add_argument(
        "--root",
        type=optional_path,
        default=None,
        help="dataset folder (cifar*: download/cache folder; coco-objects: images)",
    )
    parser.add_argument(
        "--annotations", type=optional_path, default=None, help="coco-objects: COCO instances json"
    )
    parser.add_argument(
        "--classnames",
        type=optional_str,
        default=None,
        help="class names: one per line, a JSON list, or FILE.json#KEY (None = the kind's own)",
    )
    parser.add_argument(
        "--max-per-class",
        type=optional_int,
        default=None,
        help="keep the first N images of each class (None = all)",
    )
    parser.add_argument(
        "--min-size",
        type=optional_int,
        default=None,
        help="coco-objects: smallest box side in pixels (None = 32)",
    )
    parser.add_argument(
        "--label",
        type=optional_str,
        default=None,
        help="coco-objects: category (default) or supercategory",
    )
    parser.add_argument(
        "--corruption",
        type=optional_str,
        default=None,
        help="imagenet-c: the corruption folder to read",
    )
    parser.add_argument(
        "--keep",
        type=optional_str,
        default=None,
        help=(
            "keep only these classes: comma-separated class names, ids or superclasses (None = all)"
        ),
    )
    parser.add_argument(
        "--drop",
        type=optional_str,
        default=None,
        help="leave out these classes (names, ids or superclasses)",
    )
    parser.add_argument(
        "--out",
        required=True,
        type=Path,
        help="test-set folder to create (manifest.json [+ images/])",
    )


def run(args: argparse.Namespace) -> None:
    from vlstress import provenance
    from vlstress.io import atomic_dir, sha256_file
    from vlstress.testsets import manifest
    from vlstress.testsets.kinds import KINDS, Options, build

    options = dict(
        root=args.root,
        annotations=args.annotations,
        classnames=args.classnames,
        max_per_class=args.max_per_class,
        min_size=args.min_size or Options.min_size,
        label=args.label or Options.label,
        corruption=args.corruption,
    )
    with atomic_dir(args.out) as tmp:
        data = build(args.kind, args.name, Options(**options, out=tmp))
        data = manifest.select_classes(data, args.keep, args.drop)
        if KINDS[args.kind].materialises:
            kept = {entry["path"] for entry in data.images}
            for path in (tmp / "images").rglob("*"):  # images of dropped classes are not shipped
                if path.is_file() and path.relative_to(tmp / "images").as_posix() not in kept:
                    path.unlink()
            data.root = str(args.out / "images")  # where the images will be, not the temp folder
        files = [
            args.annotations,
            Path(args.classnames.partition("#")[0]) if args.classnames else None,
        ]
        inputs = {
            str(path): sha256_file(path) for path in files if path is not None and path.is_file()
        }
        params = {
            "name": args.name,
            "kind": args.kind,
            "keep": args.keep,
            "drop": args.drop,
            **{k: (str(v) if isinstance(v, Path) else v) for k, v in options.items()},
        }
        data.provenance = provenance.build("testset", params, inputs=inputs or None)
        manifest.write(tmp / manifest.MANIFEST_NAME, data)
    log.info(
        "wrote %s: %d images, %d classes (%s)",
        args.out,
        len(data.images),
        len(data.classes),
        args.kind,
    )
