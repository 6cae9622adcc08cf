"""Video robustness sets: anchor frames with their nearby frames (Shankar, Dave et al., "Do Image
Classifiers Generalize Across Time?", ImageNet-Vid-Robust), read from the published metadata and a
local frame folder.

Kind `imagenet-vid-robust`: `--annotations` is the metadata folder as the imagenet-testbed ships it
(`src/eval_settings/imagenet-vid-robust_metadata/`: `pmsets.json` = {anchor: [neighbour frames]},
`labels.json` = {frame: [class ids 0-29]}, `rev_class_idx_map.json` = {class id: [ImageNet
indices]}), `--root` the folder the frame keys are relative to
(`val/ILSVRC2015_val_.../NNNNNN.JPEG`).
Every anchor and neighbour is one entry: `label` (its first class), `labels` (all of them: a frame
may show several), `anchor` (its anchor's key), `offset` (frame number minus the anchor's; 0 for
the anchor). The 30 classes are ILSVRC VID's, in the metadata's id order; the zero-shot classifier
reads their names (`--classnames` replaces them), and the manifest keeps each class's ImageNet
indices for classifiers with an ImageNet-1k head (the testbed projects those logits by the max
over each class's indices). `--max-per-class` keeps the first N anchors of each class (by the
anchor's first label, in key order), with all their neighbours.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from vlstress.errors import VlstressError
from vlstress.io import read_json
from vlstress.testsets.building import Options, check_images, distinct, require_root
from vlstress.testsets.manifest import ClassificationSet

# ILSVRC2015 VID's 30 classes in the metadata's id order (checked against rev_class_idx_map.json:
# 0 -> 404 airliner, 1 -> 351-353 hartebeest/impala/gazelle, ..., 29 -> 340 zebra)
VID_CLASSES = (
    "airplane", "antelope", "bear", "bicycle", "bird", "bus", "car", "cattle", "dog",
    "domestic cat", "elephant", "fox", "giant panda", "hamster", "horse", "lion", "lizard",
    "monkey", "motorcycle", "rabbit", "red panda", "sheep", "snake", "squirrel", "tiger", "train",
    "turtle", "watercraft", "whale", "zebra",
)  # fmt: skip
VID_WNIDS = (
    "n02691156", "n02419796", "n02131653", "n02834778", "n01503061", "n02924116", "n02958343",
    "n02402425", "n02084071", "n02121808", "n02503517", "n02118333", "n02510455", "n02342885",
    "n02374451", "n02129165", "n01674464", "n02484322", "n03790512", "n02324045", "n02509815",
    "n02411705", "n01726692", "n02355227", "n02129604", "n04468005", "n01662784", "n04530566",
    "n02062744", "n02391049",
)  # fmt: skip
FRAME_NUMBER = re.compile(r"(\d+)\.[A-Za-z]+$")


def frame_number(key: str) -> int:
    found = FRAME_NUMBER.search(key)
    if found is None:
        raise VlstressError(f"frame {key!r}: its file name carries no frame number")
    return int(found.group(1))


def _metadata(folder: Path) -> tuple[dict[str, list[str]], dict[str, list[int]], dict | None]:
    for name in ("pmsets.json", "labels.json"):
        if not (folder / name).is_file():
            raise VlstressError(
                f"imagenet-vid-robust metadata folder {folder} has no {name} (the testbed's "
                "src/eval_settings/imagenet-vid-robust_metadata/)"
            )
    pmsets = read_json(folder / "pmsets.json", "ImageNet-Vid-Robust pm-sets")
    labels = read_json(folder / "labels.json", "ImageNet-Vid-Robust labels")
    if not isinstance(pmsets, dict) or not all(isinstance(v, list) for v in pmsets.values()):
        raise VlstressError(f"{folder / 'pmsets.json'}: expected {{anchor: [neighbour frames]}}")
    if not isinstance(labels, dict):
        raise VlstressError(f"{folder / 'labels.json'}: expected {{frame: [class ids]}}")
    rev = folder / "rev_class_idx_map.json"
    imagenet = read_json(rev, "class map") if rev.is_file() else None
    return pmsets, labels, imagenet


def build_imagenet_vid_robust(name: str, options: Options) -> ClassificationSet:
    root = require_root(options, "imagenet-vid-robust")
    if options.annotations is None:
        raise VlstressError(
            "test-set kind imagenet-vid-robust needs --annotations: the metadata folder "
            "(pmsets.json, labels.json)"
        )
    meta = Path(options.annotations)
    pmsets, labels, imagenet = _metadata(meta)
    classes = list(VID_CLASSES)
    if options.classnames:
        from vlstress.testsets.lists import load_names

        classes = load_names(options.classnames)
        if len(classes) != len(VID_CLASSES):
            raise VlstressError(
                f"imagenet-vid-robust has {len(VID_CLASSES)} classes; {options.classnames} "
                f"names {len(classes)}"
            )
    distinct(classes, options.classnames or "the ILSVRC VID class names")
    frames = [frame for anchor in sorted(pmsets) for frame in (anchor, *pmsets[anchor])]
    unlabelled = [frame for frame in frames if not labels.get(frame)]
    if unlabelled:
        raise VlstressError(
            f"{meta / 'labels.json'}: {len(unlabelled)} frame(s) of pmsets.json have no labels, "
            f"e.g. {unlabelled[0]}"
        )
    bad = sorted({i for f in frames for i in labels[f] if not 0 <= int(i) < len(classes)})
    if bad:
        raise VlstressError(f"{meta / 'labels.json'}: class id(s) {bad} outside 0..29")
    missing = [frame for frame in dict.fromkeys(frames) if not (root / frame).is_file()]
    if missing:
        raise VlstressError(
            f"imagenet-vid-robust: {len(missing)} of {len(set(frames))} frames named in "
            f"{meta / 'pmsets.json'} are missing under {root}: {', '.join(missing[:3])}"
            + (", ..." if len(missing) > 3 else "")
        )
    kept_anchors, per_class = [], dict.fromkeys(range(len(classes)), 0)
    for anchor in sorted(pmsets):
        first = int(labels[anchor][0])
        if options.max_per_class is None or per_class[first] < options.max_per_class:
            per_class[first] += 1
            kept_anchors.append(anchor)
    entries: list[dict[str, Any]] = []
    for anchor in kept_anchors:
        base = frame_number(anchor)
        neighbours = sorted(pmsets[anchor], key=frame_number)
        for frame in (anchor, *neighbours):
            ids = [int(i) for i in labels[frame]]
            entries.append(
                {
                    "path": frame,
                    "label": ids[0],
                    "labels": ids,
                    "anchor": anchor,
                    "offset": frame_number(frame) - base,
                }
            )
    check_images(root, entries)
    return ClassificationSet(
        dataset=name,
        kind="imagenet-vid-robust",
        classes=classes,
        class_ids=list(VID_WNIDS),
        root=str(root),
        images=entries,
        source={
            "root": str(root),
            "metadata": str(meta),
            "n_anchors": len(kept_anchors),
            "imagenet_indices": imagenet,
            "reference": "modestyachts/imagenet-testbed src/eval_settings/imagenet_vid_robust.py",
        },
    )
