"""Test-set kinds whose images are written by this step, as PNG under <out>/images/.

PNG is lossless, and Pillow writes the same bytes for the same pixels, so a rerun gives a
byte-identical folder (DVC sees no change).

- `cifar10`, `cifar100`: the test split through torchvision's own `CIFAR10/100(root,
  train=False, download=True)`: --root is the download/cache folder, torchvision fetches the
  archive from its fixed URL and checks its md5, and skips the download when the archive is
  already there. Images `images/<index>.png` (index in the test split); class names are
  CIFAR's label names (underscores -> spaces); CIFAR-100 also records each class's
  superclass (coarse label).
- `coco-objects`: one crop per object box of a COCO instances json (--annotations; images in
  --root) whose width and height are both >= --min-size pixels (crowd boxes skipped). The
  class is the category, or its supercategory with --label supercategory; classes are those
  with at least one crop, in category-id order. Crops `images/<image_id>_<ann_id>.png`;
  --max-per-class keeps the first N per class in annotation-id order.
- `demo-objects`: the offline demo. The 14 scikit-image photos of the demo dataset, each
  labelled by this project (vlstress/data/demo_labels.json), as 6 views per photo: the full
  photo (long side at most 512 px), its centre and its four quadrants: 84 images, 14 classes.
- `demo-train-objects`: the same views of the demo's 8 training photos (demo_train_captions.json,
  labelled by vlstress/data/demo_train_labels.json): 48 images, 8 classes, none of them a test
  photo; what the demo's FLYP fine-tuning trains on.
"""

from __future__ import annotations

import json
import math
import pickle
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from vlstress.caption_data.images import check_image
from vlstress.errors import VlstressError
from vlstress.io import read_json
from vlstress.testsets.building import (
    Options,
    class_names,
    image_folder,
    keep_first,
    require_root,
)
from vlstress.testsets.manifest import ClassificationSet

DEMO_SIDE = 512


def save_png(image: Image.Image, path: Path) -> None:
    image.convert("RGB").save(path, format="PNG", optimize=False)


def _materialised(
    name: str,
    kind: str,
    options: Options,
    classes: list[str],
    class_ids: list[str],
    entries: list[dict[str, Any]],
    source: dict[str, Any],
    superclasses: list[str] | None = None,
) -> ClassificationSet:
    return ClassificationSet(
        dataset=name,
        kind=kind,
        classes=class_names(options.classnames, classes),
        class_ids=class_ids,
        root=str(image_folder(options)),
        images=entries,
        superclasses=superclasses,
        source=source,
    )


# ------------------------------------------------------------------ CIFAR


def _cifar(name: str, options: Options, kind: str) -> ClassificationSet:
    import torchvision
    from torchvision.datasets import CIFAR10, CIFAR100

    cls = CIFAR100 if kind == "cifar100" else CIFAR10
    if options.root is None:
        raise VlstressError(
            f"test-set kind {kind} needs --root (the folder CIFAR is downloaded to and cached in)"
        )
    try:
        data = cls(str(options.root), train=False, download=True)
    except (RuntimeError, OSError, pickle.UnpicklingError, EOFError, KeyError, ValueError) as exc:
        raise VlstressError(
            f"{kind}: could not download or read {cls.url} into {options.root}: {exc}"
        ) from None
    entries = keep_first(
        [
            {"path": f"{i:05d}.png", "label": int(label), "index": i}
            for i, label in enumerate(data.targets)
        ],
        options.max_per_class,
        key="index",
    )
    folder = image_folder(options)
    for entry in entries:
        save_png(Image.fromarray(data.data[entry["index"]]), folder / entry["path"])
    source = {
        "url": cls.url,
        "archive_md5": cls.tgz_md5,
        "split": "test",
        "download_root": str(options.root),
        "torchvision": torchvision.__version__,
    }
    names = [c.replace("_", " ") for c in data.classes]
    return _materialised(
        name,
        kind,
        options,
        names,
        list(data.classes),
        entries,
        source,
        _cifar100_superclasses(data) if kind == "cifar100" else None,
    )


def _cifar100_superclasses(data: Any) -> list[str] | None:
    """Coarse label of each fine class, from the test batch (torchvision does not expose it)."""
    folder = Path(data.root) / data.base_folder
    with open(folder / data.test_list[0][0], "rb") as fh:
        batch = pickle.load(fh, encoding="latin1")
    with open(folder / data.meta["filename"], "rb") as fh:
        coarse_names = pickle.load(fh, encoding="latin1").get("coarse_label_names")
    if "coarse_labels" not in batch or not coarse_names:
        return None
    coarse = dict(zip(batch["fine_labels"], batch["coarse_labels"]))
    return [
        coarse_names[coarse[fine]].replace("_", " ") if fine in coarse else ""
        for fine in range(len(data.classes))
    ]


def build_cifar10(name: str, options: Options) -> ClassificationSet:
    return _cifar(name, options, "cifar10")


def build_cifar100(name: str, options: Options) -> ClassificationSet:
    return _cifar(name, options, "cifar100")


# ------------------------------------------------------------------ COCO objects


def _coco_instances(path: Path) -> tuple[dict[int, dict], dict[int, str], list[dict]]:
    """(categories by id, image file names by id, annotations) of a COCO instances json, checked."""
    data = read_json(path, "COCO instances json")
    if not isinstance(data, dict) or not all(
        isinstance(data.get(key), list) for key in ("images", "annotations", "categories")
    ):
        raise VlstressError(
            f"COCO instances json {path}: expected an object with 'images', 'annotations' and "
            "'categories' lists"
        )
    categories, images = {}, {}
    for pos, cat in enumerate(data["categories"]):
        if (
            not isinstance(cat, dict)
            or not isinstance(cat.get("id"), int)
            or not isinstance(cat.get("name"), str)
        ):
            raise VlstressError(
                f"COCO instances json {path}: categories[{pos}] lacks an integer 'id' or a 'name'"
            )
        categories[cat["id"]] = cat
    for pos, img in enumerate(data["images"]):
        if (
            not isinstance(img, dict)
            or "id" not in img
            or not isinstance(img.get("file_name"), str)
        ):
            raise VlstressError(
                f"COCO instances json {path}: images[{pos}] lacks 'id' or 'file_name'"
            )
        images[img["id"]] = img["file_name"]
    for pos, ann in enumerate(data["annotations"]):
        box = ann.get("bbox") if isinstance(ann, dict) else None
        if (
            not isinstance(box, list)
            or len(box) != 4
            or not all(isinstance(v, (int, float)) for v in box)
            or "id" not in ann
        ):
            raise VlstressError(
                f"COCO instances json {path}: annotations[{pos}] lacks an 'id' or a 4-number 'bbox'"
            )
        if ann.get("category_id") not in categories or ann.get("image_id") not in images:
            raise VlstressError(
                f"COCO instances json {path}: annotation {ann['id']} names an unknown category or "
                "image"
            )
    return categories, images, data["annotations"]


def _crop(image: Image.Image, box: list[float]) -> Image.Image:
    """The pixels covered by a COCO box [x, y, w, h] (outward to whole pixels, inside the image)."""
    x, y, w, h = box
    left, top = max(0, math.floor(x)), max(0, math.floor(y))
    right, bottom = min(image.width, math.ceil(x + w)), min(image.height, math.ceil(y + h))
    return image.crop((left, top, right, bottom))


def build_coco_objects(name: str, options: Options) -> ClassificationSet:
    root = require_root(options, "coco-objects")
    if options.annotations is None:
        raise VlstressError(
            "test-set kind coco-objects needs --annotations (a COCO instances json)"
        )
    categories, images, annotations = _coco_instances(options.annotations)
    by_super = options.label == "supercategory"
    candidates = [
        a
        for a in annotations
        if not a.get("iscrowd")
        and a["bbox"][2] >= options.min_size
        and a["bbox"][3] >= options.min_size
    ]
    key = (
        (lambda cid: categories[cid].get("supercategory") or categories[cid]["name"])
        if by_super
        else (lambda cid: cid)
    )
    order: dict[Any, int] = {}
    for cid in sorted({a["category_id"] for a in candidates}):  # classes in category-id order
        order.setdefault(key(cid), len(order))
    entries = [
        {
            "path": f"{a['image_id']}_{a['id']}.png",
            "label": order[key(a["category_id"])],
            "image_id": a["image_id"],
            "annotation_id": a["id"],
            "bbox": a["bbox"],
        }
        for a in candidates
    ]
    entries = keep_first(entries, options.max_per_class, key="annotation_id")
    if not entries:
        raise VlstressError(
            f"coco-objects {options.annotations}: no box of at least "
            f"{options.min_size}x{options.min_size} pixels"
        )
    folder = image_folder(options)
    for image_id in sorted({e["image_id"] for e in entries}):
        path = root / images[image_id]
        check_image(path)
        with Image.open(path) as opened:
            img = opened.convert("RGB")
            for entry in (e for e in entries if e["image_id"] == image_id):
                save_png(_crop(img, entry["bbox"]), folder / entry["path"])
    if by_super:
        classes, class_ids, superclasses = list(order), list(order), None
    else:
        classes = [categories[cid]["name"] for cid in order]
        class_ids = [str(cid) for cid in order]
        superclasses = [categories[cid].get("supercategory", "") for cid in order]
    source = {
        "annotations": str(options.annotations),
        "images": str(root),
        "min_size": options.min_size,
        "label": options.label,
        "instances": len(annotations),
        "crowd": sum(1 for a in annotations if a.get("iscrowd")),
        "boxes_kept": len(candidates),
    }
    return _materialised(
        name, "coco-objects", options, classes, class_ids, entries, source, superclasses
    )


# ------------------------------------------------------------------ demo objects

DEMO_VIEWS = ("full", "centre", "top-left", "top-right", "bottom-left", "bottom-right")


def _views(image: Image.Image) -> dict[str, Image.Image]:
    w, h = image.size
    hw, hh = w // 2, h // 2
    return {
        "full": image,
        "centre": image.crop((w // 4, h // 4, w // 4 + hw, h // 4 + hh)),
        "top-left": image.crop((0, 0, hw, hh)),
        "top-right": image.crop((w - hw, 0, w, hh)),
        "bottom-left": image.crop((0, h - hh, hw, h)),
        "bottom-right": image.crop((w - hw, h - hh, w, h)),
    }


def build_demo_objects(name: str, options: Options) -> ClassificationSet:
    return _demo_views(
        name, options, "demo-objects", "data/demo_captions.json", "data/demo_labels.json"
    )


def build_demo_train_objects(name: str, options: Options) -> ClassificationSet:
    return _demo_views(
        name,
        options,
        "demo-train-objects",
        "data/demo_train_captions.json",
        "data/demo_train_labels.json",
    )


def _demo_views(
    name: str, options: Options, kind: str, captions: str, labels_file: str
) -> ClassificationSet:
    """Six views of each shipped photo of `captions`, labelled by `labels_file` (package data,
    named in full where they are passed: the code stamps find them so)."""
    import skimage

    from vlstress.caption_data.demo import demo_captions, load_photo

    labels = json.loads(
        resources.files("vlstress").joinpath(labels_file).read_text(encoding="utf-8")
    )["labels"]
    photos = demo_captions(captions)
    classes = sorted(set(labels.values()))
    if set(labels) != set(photos) or len(classes) != len(labels):
        raise VlstressError(f"{labels_file} must give each photo of {captions} its own class label")
    photo_of = {label: photo for photo, label in labels.items()}
    planned = [
        {"path": f"{photo_of[cls]}_{k}_{view}.png", "label": label, "view": view}
        for label, cls in enumerate(classes)
        for k, view in enumerate(DEMO_VIEWS)
    ]
    entries = keep_first(planned, options.max_per_class)  # paths sort in view order: "full" first
    folder = image_folder(options)
    for label in sorted({e["label"] for e in entries}):
        photo = photo_of[classes[label]]
        image = Image.fromarray(np.asarray(load_photo(photos[photo]["loader"]))).convert("RGB")
        image.thumbnail((DEMO_SIDE, DEMO_SIDE))  # deterministic resampling; CLIP sees 224 px anyway
        views = _views(image)
        for entry in (e for e in entries if e["label"] == label):
            save_png(views[entry["view"]], folder / entry["path"])
    source = {
        "package": "scikit-image",
        "version": skimage.__version__,  # type: ignore[attr-defined]  # missing from its stub
        "labels": f"vlstress/{labels_file}",
        "views": list(DEMO_VIEWS),
        "max_side": DEMO_SIDE,
    }
    return _materialised(
        name, kind, options, classes, [photo_of[c] for c in classes], entries, source
    )
