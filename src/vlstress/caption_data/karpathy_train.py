"""Training data for robust fine-tuning: the Karpathy train split (COCO train2014 + the "restval"
part of val2014, about 113k photos with 5 captions each), as ALBEF and BLIP train on it.

    <out>/images/COCO_<train2014|val2014>_<12 digits>.jpg   the photos (each one decoded once)
    <out>/captions.json                                     [{"image":
                                                              "train2014/COCO_train2014_<id>.jpg",
                                                              "caption": [...]}, ...]
    <out>/download.json                                     sources, sha256 of every file,
                                                            provenance

The list is BLIP's `coco_karpathy_train.json` (one entry per caption; grouped here per photo, in
the order of first appearance). Its sha256 cannot be pinned from this project's offline
machines: it is recorded in download.json instead, so a run says exactly which list it used.
Images come from a local folder first (`--images`, COCO or 12-digit names), else from the COCO
image server: `--coco-url` is the COCO root holding `train2014/` and `val2014/`. The flags are
those of the karpathy kind. The test photos never reach training: `vlstress train-split`
removes every Karpathy test photo by its COCO id.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from vlstress import download
from vlstress.caption_data.karpathy import (
    fetch_options,
    gather_images,
    parse_image_ids,
    read_list,
)
from vlstress.errors import VlstressError
from vlstress.io import sha256_file

TRAIN_LIST = {
    "file": "coco_karpathy_train.json",
    "url": "https://storage.googleapis.com/sfr-vision-language-research/datasets/coco_karpathy_train.json",
}
COCO_ROOT = "http://images.cocodataset.org"
IMAGE = re.compile(r"^(train2014|val2014)/COCO_(?:train2014|val2014)_(\d{12})\.jpg$")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The karpathy kind's flags (--karpathy-url, --coco-url, --images, --image-ids, ...) serve this
    kind too."""


def group(entries: list[dict[str, Any]], source: str) -> list[dict[str, Any]]:
    """One entry per photo with all its captions, in the order of first appearance."""
    photos: dict[str, dict[str, Any]] = {}
    for pos, entry in enumerate(entries):
        if not IMAGE.match(entry["image"]):
            raise VlstressError(
                f"{source}: entry {pos} image {entry['image']!r} is not train2014/ or "
                "val2014/COCO_..._<12 digits>.jpg"
            )
        captions = (
            [entry["caption"]] if isinstance(entry["caption"], str) else list(entry["caption"])
        )
        photos.setdefault(entry["image"], {"image": entry["image"], "caption": []})[
            "caption"
        ].extend(captions)
    return list(photos.values())


def _coco_id(image: str) -> int:
    """The COCO id of an image name that `group` has checked already."""
    match = IMAGE.match(image)
    assert match is not None, image
    return int(match.group(2))


def materialize(args: argparse.Namespace, out: Path) -> dict[str, Any]:
    opts = fetch_options(args)
    url = args.karpathy_url or TRAIN_LIST["url"]
    list_path = download.fetch(url, desc=TRAIN_LIST["file"], **opts)
    photos = group(read_list(list_path, f"Karpathy train json {url}"), url)
    n_split = len(photos)
    ids = parse_image_ids(args.image_ids)
    if ids is not None:
        wanted = set(ids)
        photos = [p for p in photos if _coco_id(p["image"]) in wanted]
        found = {_coco_id(p["image"]) for p in photos}
        if found != wanted:
            raise VlstressError(
                f"--image-ids: not in the Karpathy train split ({url}): "
                f"{', '.join(map(str, sorted(wanted - found)))}"
            )
    if args.max_images:
        photos = photos[: args.max_images]
    base = args.coco_url or COCO_ROOT
    local_dir = Path(args.images) if getattr(args, "images", None) else None
    to_fetch = [
        (
            Path(p["image"]).name,
            download.join_url(base, p["image"]),
            [Path(p["image"]).name, f"{_coco_id(p['image']):012d}.jpg"],
        )
        for p in photos
    ]
    image_dir = out / "images"
    fetched = gather_images(to_fetch, local_dir, image_dir, opts, args.workers, "COCO train images")
    files = {
        f"images/{Path(p['image']).name}": sha256_file(image_dir / Path(p["image"]).name)
        for p in photos
    }
    return {
        "captions": photos,
        "files": files,
        "source": {
            "karpathy_train": {
                "url": url,
                "sha256": sha256_file(list_path),
                "pinned": False,
                "n_images_split": n_split,
            },
            "coco_images": {
                "url": base,
                "local_folder": str(local_dir) if local_dir else None,
                "n_fetched": fetched,
            },
            "n_images": len(photos),
        },
    }
