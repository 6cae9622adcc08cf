"""What every test-set kind shares: its options, folder scanning, per-class limits, checks.

Images found on disk are listed through torchvision's ImageFolder rules (`make_dataset`:
files with an image extension, walked recursively in sorted order, a class folder without
any image is an error), then each kept image is decoded fully so that a corrupt file fails
here, naming the file, rather than in the middle of an embedding run.
"""

from __future__ import annotations

import logging
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlstress.caption_data.images import check_image
from vlstress.errors import VlstressError

log = logging.getLogger(__name__)

WNID = re.compile(r"n\d{8}")


@dataclass(frozen=True)
class Options:
    """The flags of `vlstress testset`; a kind reads the ones it needs (see Kind.uses)."""

    # the dataset folder (CIFAR: download/cache folder; coco-objects: images folder)
    root: Path | None = None
    annotations: Path | None = None  # coco-objects: COCO instances json
    classnames: str | None = None  # class-name file: one per line, a JSON list, or FILE.json#KEY
    max_per_class: int | None = None  # keep the first N images of each class
    min_size: int = 32  # coco-objects: smallest box side (pixels)
    label: str = "category"  # coco-objects: 'category' or 'supercategory'
    corruption: str | None = None  # imagenet-c: the corruption folder to read
    out: Path | None = None  # the output folder; materialising kinds write out/images/


def require_root(options: Options, kind: str) -> Path:
    if options.root is None:
        raise VlstressError(f"test-set kind {kind} needs --root (the dataset folder)")
    if not options.root.is_dir():
        raise VlstressError(f"{kind} folder not found: {options.root}")
    return options.root


def image_folder(options: Options) -> Path:
    """out/images/ of a materialising kind."""
    if options.out is None:
        raise VlstressError("this test-set kind writes images: give an output folder (--out)")
    folder = options.out / "images"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def subfolders(folder: Path) -> list[str]:
    """Sorted names of the visible sub-folders (class folders) of `folder`."""
    return sorted(p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))


def name_from_folder(folder: str) -> str:
    return folder.replace("_", " ").strip()


def scan(
    root: Path, base: Path, folder_labels: dict[str, int], what: str, **extra: Any
) -> list[dict[str, Any]]:
    """Entries {path (relative to root), label, **extra} for the images of base/<folder>/."""
    from torchvision.datasets.folder import IMG_EXTENSIONS, make_dataset

    if not folder_labels:
        raise VlstressError(f"{what}: no class folders in {base}")
    try:
        samples = make_dataset(str(base), folder_labels, extensions=IMG_EXTENSIONS)
    except FileNotFoundError as exc:  # "Found no valid file for the classes X, Y."
        raise VlstressError(f"{what} {base}: a class folder holds no image: {exc}") from None
    return [
        {"path": Path(path).relative_to(root).as_posix(), "label": label, **extra}
        for path, label in samples
    ]


def keep_first(
    entries: list[dict[str, Any]], limit: int | None, key: str = "path"
) -> list[dict[str, Any]]:
    """Entries sorted by (label, key); with a limit, the first `limit` of each label."""
    ordered = sorted(entries, key=lambda entry: (entry["label"], entry[key]))
    if limit is None:
        return ordered
    seen: dict[int, int] = defaultdict(int)
    kept = []
    for entry in ordered:
        if seen[entry["label"]] < limit:
            seen[entry["label"]] += 1
            kept.append(entry)
    return kept


def check_images(root: Path, entries: Iterable[dict[str, Any]]) -> None:
    for entry in entries:
        check_image(root / entry["path"])


def unknown_error(what: str, base: Path, unknown: list[str], expected: str) -> VlstressError:
    more = (
        f" (and {len(unknown) - 1} more: "
        f"{', '.join(unknown[1:4])}{', ...' if len(unknown) > 4 else ''})"
        if len(unknown) > 1
        else ""
    )
    return VlstressError(f"{what} {base}: folder {unknown[0]!r} is not {expected}{more}")


def classes_without_images(
    class_ids: list[str], entries: list[dict[str, Any]], what: str
) -> list[str]:
    """Class ids no image was found for (a subset of a fixed class list is allowed, and
    recorded)."""
    present = {entry["label"] for entry in entries}
    missing = [cid for label, cid in enumerate(class_ids) if label not in present]
    if missing:
        log.warning(
            "%s: %d of %d classes have no images (kept as classes: the label set is fixed)",
            what,
            len(missing),
            len(class_ids),
        )
    return missing


def distinct(names: list[str], source: str, ids: list[str] | None = None) -> list[str]:
    """`names`, refused when two coincide (case and spaces aside): their classifier rows would tie,
    and the true class wins ties, so each would score the other's images. (The ImageNet kinds'
    own names, OpenAI's list, repeat `missile` and `sunglasses`: the published protocol, kept.)"""
    from vlstress.testsets.manifest import duplicate_names

    same = duplicate_names(names)
    if same:
        where = ids or [f"#{i + 1}" for i in range(len(names))]
        raise VlstressError(
            f"{source}: class names must be distinct (tied classifier rows would score each "
            "other's images): "
            + "; ".join(
                f"{name!r} names classes {', '.join(where[i] for i in rows)}"
                for name, rows in same.items()
            )
        )
    return names


def class_names(
    spec: str | None,
    own: list[str],
    full_indices: list[int] | None = None,
    ids: list[str] | None = None,
) -> list[str]:
    """The kind's own class names, or those of a class-name file (`--classnames`).

    The file gives one name per class; for an ImageNet subset it may instead give all 1000
    ImageNet names (CLIP_benchmark's `en_classnames.json#imagenet1k`), indexed by `full_indices`.
    """
    if spec is None:
        return own
    from vlstress.testsets.lists import load_names

    names = load_names(spec)
    if len(names) == len(own):
        return distinct(names, f"class-name file {spec}", ids)
    if full_indices is not None and len(names) == 1000:
        return distinct([names[i] for i in full_indices], f"class-name file {spec}", ids)
    expected = f"{len(own)}" + (" or 1000" if full_indices is not None else "")
    raise VlstressError(f"class-name file {spec}: {len(names)} names for {expected} classes")
