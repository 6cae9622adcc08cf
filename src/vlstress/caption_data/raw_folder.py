"""A raw data folder (written by `vlstress download`) read into the canonical manifest
(vlstress.caption_data.manifest): what `vlstress prepare` writes.

`<raw>/captions.json` is either COCO captions format (images + annotations) or a list of
{image, caption} (Karpathy-style, one caption or a list); images are in `<raw>/images/`, and
each one is checked to decode.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from vlstress import provenance
from vlstress.caption_data.coco_dir import read_coco_captions
from vlstress.caption_data.images import check_image
from vlstress.caption_data.manifest import validate_entries
from vlstress.errors import VlstressError
from vlstress.io import read_json, sha256_file


def entries_from_coco(data: dict[str, Any], raw: Path) -> list[dict[str, Any]]:
    captions: dict[Any, list[str]] = {}
    for ann in data["annotations"]:
        captions.setdefault(ann["image_id"], []).append(ann["caption"].strip())
    return [
        {
            "image": img["file_name"],
            "path": str(raw / "images" / img["file_name"]),
            "image_id": str(img["id"]),
            "caption": captions[img["id"]],
        }
        for img in data["images"]
        if img["id"] in captions
    ]


def entries_from_list(data: list[dict[str, Any]], raw: Path, source: str) -> list[dict[str, Any]]:
    validate_entries(data, source)
    entries = []
    for entry in data:
        name = entry["image"]
        digits = re.findall(r"\d+", Path(name).stem)
        image_id = str(int(digits[-1])) if digits else Path(name).stem
        captions = [entry["caption"]] if isinstance(entry["caption"], str) else entry["caption"]
        entries.append(
            {
                "image": name,
                "path": str(raw / "images" / Path(name).name),
                "image_id": image_id,
                "caption": [c.strip() for c in captions],
            }
        )
    return entries


def build_manifest(dataset: str, raw: Path) -> dict[str, Any]:
    """The manifest of the raw folder `raw`, named `dataset`: its entries checked, every image
    decoded."""
    captions_path = raw / "captions.json"
    data = read_json(captions_path, "captions json")
    if isinstance(data, dict):
        entries = entries_from_coco(read_coco_captions(captions_path), raw)
    elif isinstance(data, list):
        entries = entries_from_list(data, raw, f"captions json {captions_path}")
    else:
        raise VlstressError(
            f"captions json {captions_path}: expected a COCO object or a list of {{image, caption}}"
        )
    validate_entries(entries, f"captions json {captions_path}")
    for entry in entries:
        check_image(Path(entry["path"]))
    return {
        "dataset": dataset,
        "images": entries,
        "provenance": provenance.build(
            "prepare",
            {"dataset": dataset, "raw": str(raw)},
            inputs={"captions.json": sha256_file(captions_path)},
        ),
    }
