"""The folder `vlstress testset` writes: `<out>/manifest.json` (vlstress.testsets.manifest), plus
`<out>/images/` for the kinds that produce their images, and the flags of the kinds' options
(vlstress.testsets.building.Options) and of the classes kept.

The folder appears only when everything succeeded. Paths in the manifest stay as given (a
relative root stays relative), so the manifest is the same wherever the project lives.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vlstress.argtypes import optional_int, optional_names, optional_path, optional_str

if TYPE_CHECKING:
    from vlstress.testsets.manifest import ClassificationSet


def add_option_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of the kinds' options: --root, --annotations, --classnames, --max-per-class,
    --min-size, --label, --corruption (a kind reads the ones it uses), then the classes kept:
    --keep, --drop."""
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
        type=optional_names,
        default=None,
        help=(
            "keep only these classes: comma-separated class names, ids or superclasses (None = all)"
        ),
    )
    parser.add_argument(
        "--drop",
        type=optional_names,
        default=None,
        help="leave out these classes (names, ids or superclasses)",
    )


def option_values(args: argparse.Namespace) -> dict[str, Any]:
    """The options (Options fields but `out`) the flags of `add_option_arguments` give, a missing
    min-size or label taking the default."""
    from vlstress.testsets.kinds import Options

    return dict(
        root=args.root,
        annotations=args.annotations,
        classnames=args.classnames,
        max_per_class=args.max_per_class,
        min_size=args.min_size or Options.min_size,
        label=args.label or Options.label,
        corruption=args.corruption,
    )


def write_testset(
    out: Path,
    *,
    name: str,
    kind: str,
    options: dict[str, Any],
    keep: list[str] | None,
    drop: list[str] | None,
    disjoint_from: Path | None = None,
) -> ClassificationSet:
    """Build the test set `name` of `kind` into the folder `out` (replaced as a whole), only the
    classes `keep` names and not those `drop` names (vlstress.testsets.manifest.select_classes)."""
    from vlstress import provenance
    from vlstress.errors import VlstressError
    from vlstress.io import atomic_dir, sha256_file
    from vlstress.testsets import manifest
    from vlstress.testsets.kinds import KINDS, Options, build

    with atomic_dir(out) as tmp:
        data = build(kind, name, Options(**options, out=tmp))
        data = manifest.select_classes(data, keep, drop)
        if disjoint_from is not None:  # e.g. an OOD set: refused here, before any model work
            other = manifest.load(disjoint_from)
            shared = manifest.shared_classes(data, other)
            if shared:
                raise VlstressError(
                    f"test set {name} shares {len(shared)} class(es) with {other.dataset} "
                    f"({disjoint_from}): {', '.join(shared)}; leave them out (drop)"
                )
        if KINDS[kind].materialises:
            kept = {entry["path"] for entry in data.images}
            for path in (tmp / "images").rglob("*"):  # images of dropped classes are not shipped
                if path.is_file() and path.relative_to(tmp / "images").as_posix() not in kept:
                    path.unlink()
            data.root = str(out / "images")  # where the images will be, not the temp folder
        files = [
            options["annotations"],
            Path(options["classnames"].partition("#")[0]) if options["classnames"] else None,
        ]
        inputs = {
            str(path): sha256_file(path) for path in files if path is not None and path.is_file()
        }
        params = {
            "name": name,
            "kind": kind,
            "keep": keep,
            "drop": drop,
            **{k: (str(v) if isinstance(v, Path) else v) for k, v in options.items()},
        }
        data.provenance = provenance.build("testset", params, inputs=inputs or None)
        manifest.write(tmp / manifest.MANIFEST_NAME, data)
    return data
