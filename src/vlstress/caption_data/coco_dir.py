"""A local COCO-format directory: an images folder and a captions json.

The referenced images are copied into the raw folder so that the workflow's
data is self-contained and versioned by DVC, and each one is checked to decode.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import Any

from vlstress.caption_data import images as image_checks
from vlstress.errors import VlstressError
from vlstress.io import read_json, sha256_file


def read_coco_captions(path: Path) -> dict[str, Any]:
    data = read_json(path, "COCO captions json")
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("images"), list)
        or not isinstance(data.get("annotations"), list)
    ):
        raise VlstressError(
            f"COCO captions json {path}: expected an object with 'images' and 'annotations' lists"
        )
    if not data["images"] or not data["annotations"]:
        raise VlstressError(f"COCO captions json {path}: no images or no annotations")
    for pos, image in enumerate(data["images"]):
        if not isinstance(image, dict) or "id" not in image or "file_name" not in image:
            raise VlstressError(
                f"COCO captions json {path}: images[{pos}] lacks 'id' or 'file_name'"
            )
    for pos, ann in enumerate(data["annotations"]):
        if (
            not isinstance(ann, dict)
            or "image_id" not in ann
            or not isinstance(ann.get("caption"), str)
        ):
            raise VlstressError(
                f"COCO captions json {path}: annotations[{pos}] lacks 'image_id' or a 'caption' "
                "string"
            )
    return data


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--images", help="coco-dir: folder holding the images")
    parser.add_argument("--captions", help="coco-dir: COCO-format captions json")


def materialize(args: argparse.Namespace, out: Path) -> dict[str, Any]:
    if not args.images or not args.captions:
        raise VlstressError(
            "dataset kind coco-dir needs --images and --captions (dataset.images / "
            "dataset.captions)"
        )
    images_dir, captions_path = Path(args.images), Path(args.captions)
    if not images_dir.is_dir():
        raise VlstressError(f"coco-dir images folder not found: {images_dir}")
    data = read_coco_captions(captions_path)
    captioned = {ann["image_id"] for ann in data["annotations"]}
    listed = sorted(
        (img for img in data["images"] if img["id"] in captioned), key=lambda img: str(img["id"])
    )
    if args.max_images:
        listed = listed[: args.max_images]
    keep_ids = {img["id"] for img in listed}
    files = {}
    for img in listed:
        src = images_dir / img["file_name"]
        image_checks.check_image(src)
        dst = out / "images" / img["file_name"]
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
        files[f"images/{img['file_name']}"] = sha256_file(dst)
    subset = {
        "images": [{"id": img["id"], "file_name": img["file_name"]} for img in listed],
        "annotations": sorted(
            (
                {"image_id": a["image_id"], "id": a.get("id"), "caption": a["caption"]}
                for a in data["annotations"]
                if a["image_id"] in keep_ids
            ),
            key=lambda a: (str(a["image_id"]), str(a["id"])),
        ),
    }
    return {
        "captions": subset,
        "files": files,
        "source": {"images": str(images_dir), "captions": str(captions_path)},
    }
