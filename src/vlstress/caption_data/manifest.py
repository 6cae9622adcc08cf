"""The canonical manifest every later step reads.

    {"dataset": str, "provenance": {...},
     "images": [{"image": name, "path": file, "image_id": str, "caption": [str, ...]}, ...]}

`image` is the image's name in its source annotation (for the Karpathy split
`val2014/COCO_val2014_<id>.jpg`), `path` the local file. Entries use the same
keys as the Karpathy / official RoCOCO lists (`image`, `caption`), so caption
sets in the official format and manifests are read by the same code
(`load_caption_entries`) and matched on `image`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlstress.errors import VlstressError
from vlstress.io import read_json


@dataclass(frozen=True)
class CaptionTable:
    """Captions flattened in file order, with the index of the image each belongs to."""

    images: list[str]
    captions: list[str]
    caption_image: list[int]  # caption index -> image index

    @property
    def captions_per_image(self) -> list[list[int]]:
        groups: list[list[int]] = [[] for _ in self.images]
        for caption_idx, image_idx in enumerate(self.caption_image):
            groups[image_idx].append(caption_idx)
        return groups


def validate_entries(entries: Any, source: str) -> list[dict[str, Any]]:
    if not isinstance(entries, list):
        raise VlstressError(
            f"{source}: expected a list of {{image, caption}} entries, got {type(entries).__name__}"
        )
    if not entries:
        raise VlstressError(f"{source}: no images listed")
    for pos, entry in enumerate(entries):
        if not isinstance(entry, dict) or "image" not in entry or "caption" not in entry:
            raise VlstressError(
                f"{source}: entry {pos} lacks 'image' or 'caption': {str(entry)[:120]}"
            )
        captions = entry["caption"]
        if isinstance(captions, str):
            captions = [captions]
        if (
            not isinstance(captions, list)
            or not captions
            or not all(isinstance(c, str) and c.strip() for c in captions)
        ):
            raise VlstressError(f"{source}: entry {pos} ({entry['image']}) has no usable captions")
    return entries


def load_manifest(path: str | Path) -> dict[str, Any]:
    data = read_json(path, "manifest")
    if not isinstance(data, dict) or "images" not in data:
        raise VlstressError(
            f"manifest {path}: expected an object with an 'images' list; run `vlstress prepare`"
        )
    validate_entries(data["images"], f"manifest {path}")
    return data


def load_caption_entries(path: str | Path) -> list[dict[str, Any]]:
    """Entries of a manifest or of an official-format caption list."""
    data = read_json(path, "caption file")
    if isinstance(data, dict) and "images" in data:
        data = data["images"]
    return validate_entries(data, f"caption file {path}")


def caption_table(entries: list[dict[str, Any]]) -> CaptionTable:
    images, captions, owner = [], [], []
    for image_idx, entry in enumerate(entries):
        images.append(entry["image"])
        entry_captions = (
            [entry["caption"]] if isinstance(entry["caption"], str) else entry["caption"]
        )
        for caption in entry_captions:
            captions.append(caption)
            owner.append(image_idx)
    return CaptionTable(images=images, captions=captions, caption_image=owner)
