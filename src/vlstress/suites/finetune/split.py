"""Keeping the test set out of training: the training manifest minus every test image and caption.

A training image is a test image when it has the same COCO image id (read from COCO file names,
`000000022192.jpg` or `COCO_val2014_000000022192.jpg`: the same photo in the 2014 and 2017
releases) or the same file content (sha256); a training caption is a test caption when it equals
one after lower-casing and collapsing spaces. Both are removed (and counted); `check_disjoint`
is the guard the fine-tuning step runs again before it trains, and it fails the step if
anything of the test set is left.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from vlstress.errors import VlstressError
from vlstress.io import sha256_file


def _caption_key(caption: str) -> str:
    return re.sub(r"\s+", " ", caption.strip().lower())


def _captions(entry: dict[str, Any]) -> list[str]:
    return [entry["caption"]] if isinstance(entry["caption"], str) else list(entry["caption"])


_COCO_NAME = re.compile(r"(\d{6,})\.\w+$")


def _coco_id(entry: dict[str, Any]) -> int | None:
    """The COCO id in the image's file name (12 zero-padded digits in COCO's naming), None for other
    names."""
    found = _COCO_NAME.search(str(entry["image"]))
    return int(found.group(1)) if found else None


def test_keys(test_entries: list[dict[str, Any]]) -> tuple[set[int], set[str], set[str]]:
    """(COCO ids, file sha256s, caption keys) of a test manifest."""
    ids = {i for i in map(_coco_id, test_entries) if i is not None}
    hashes = {sha256_file(entry["path"]) for entry in test_entries}
    captions = {_caption_key(c) for entry in test_entries for c in _captions(entry)}
    return ids, hashes, captions


def without_test(
    train_entries: list[dict[str, Any]], test_entries: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """(training entries without the test images and captions, counts of what was removed)."""
    ids, hashes, captions = test_keys(test_entries)
    kept, images_removed, captions_removed = [], 0, 0
    for entry in train_entries:
        if _coco_id(entry) in ids or sha256_file(entry["path"]) in hashes:
            images_removed += 1
            continue
        own = [c for c in _captions(entry) if _caption_key(c) not in captions]
        captions_removed += len(_captions(entry)) - len(own)
        if own:
            kept.append({**entry, "caption": own})
        else:
            images_removed += 1
    if not kept:
        raise VlstressError(
            f"no training image left: all {len(train_entries)} training images (or all their "
            "captions) are in the test set; fine-tuning needs images the evaluation never sees"
        )
    return kept, {
        "train_images": len(train_entries),
        "kept_images": len(kept),
        "test_images_removed": images_removed,
        "test_captions_removed": captions_removed,
    }


def check_disjoint(train_entries: list[dict[str, Any]], test_entries: list[dict[str, Any]]) -> None:
    """Fail naming the first training image or caption that is also in the test set."""
    ids, hashes, captions = test_keys(test_entries)
    for entry in train_entries:
        if _coco_id(entry) in ids or sha256_file(entry["path"]) in hashes:
            raise VlstressError(
                f"training image {entry['path']} is a test image: fine-tuning on it would leak "
                "the test set"
            )
        for caption in _captions(entry):
            if _caption_key(caption) in captions:
                raise VlstressError(
                    f"training caption {caption!r} of {entry['path']} is a test caption: it "
                    "would leak the test set"
                )


def training_manifest(train_path: Path, test_path: Path) -> tuple[dict[str, Any], dict[str, int]]:
    """(the training manifest without the test images and captions, with the counts in its
    provenance; the counts)."""
    from vlstress import provenance
    from vlstress.caption_data.manifest import load_manifest

    train = load_manifest(train_path)
    test = load_manifest(test_path)
    kept, counts = without_test(train["images"], test["images"])
    manifest = {
        "dataset": train.get("dataset"),
        "images": kept,
        "split": counts,
        "provenance": provenance.build(
            "train-split",
            counts,
            inputs={str(p): sha256_file(p) for p in (train_path, test_path)},
        ),
    }
    return manifest, counts
