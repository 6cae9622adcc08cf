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


# ------------------------------------------------------------------ YTBB-Robust

YTBB_FILES = (
    "anchor_labels.json",
    "pmk_labels.json",
    "ytbb_robustness_test_anchors_full.csv",
    "ytbb_class_index.json",
)
# pair labels that rule a neighbour out (imagenet-testbed ytbb_robust.py load_pmk_annotations)
PROBLEMATIC = (
    "dissimilar", "problematic", "incorrect", "dont know", "deformation", "background-change",
    "occlusion-increased", "blur-increase", "bad-anchor",
)  # fmt: skip
YTBB_K = 10  # the neighbour offsets the review covers


def _key(path: str) -> str:
    """`<video>_<anchor ms>/frame-<n>.jpg`: the last two parts of a path (testbed path_to_key)."""
    parts = Path(path).parts
    return "/".join(parts[-2:])


def _frame_parts(key: str) -> tuple[str, int, int]:
    """(video, frame index, anchor ms) of `<video>_<ms>/frame-<n>.jpg`."""
    try:
        parent, name = _key(key).split("/")
        video, ms = parent.rsplit("_", 1)
        return video, int(name.split("-")[1].split(".")[0]), int(ms)
    except (ValueError, IndexError):
        raise VlstressError(f"YTBB frame key {key!r} is not <video>_<ms>/frame-<n>.jpg") from None


def _reviewed(path: Path) -> tuple[dict[str, set[str]], list[str]]:
    """key -> the names of its review labels (the last review of a key wins, as the testbed's)."""
    data = read_json(path, "YTBB-Robust review")
    if not isinstance(data, dict) or "labels" not in data or "annotations" not in data:
        raise VlstressError(f"{path}: expected {{labels: [...], annotations: [...]}}")
    names = list(data["labels"])
    out = {}
    for row in data["annotations"]:
        out[row["key"]] = {names[int(i)] for i in row["labels"]}
    return out, names


def build_ytbb_robust(name: str, options: Options) -> ClassificationSet:
    """YTBB-Robust as the imagenet-testbed scores it (`src/eval_settings/ytbb_robust.py`): anchors
    reviewed `good` (not `bad`, `unsure`, nor flagged `bad-anchor` in the pair review), their
    labels the original YTBB label (ids 22 and 23 swapped, as the testbed reads the csv) plus the
    classes the review added; neighbours the frames at offsets -10..10 whose pair review says
    `similar` and no problem, each scored against its anchor's labels."""
    import csv

    root = require_root(options, "ytbb-robust")
    if options.annotations is None:
        raise VlstressError(
            "test-set kind ytbb-robust needs --annotations: the metadata folder "
            f"({', '.join(YTBB_FILES)})"
        )
    meta = Path(options.annotations)
    for file in YTBB_FILES:
        if not (meta / file).is_file():
            raise VlstressError(
                f"ytbb-robust metadata folder {meta} has no {file} (the testbed's "
                "src/eval_settings/ytbb-robust_metadata/)"
            )
    index = read_json(meta / "ytbb_class_index.json", "YTBB class index")
    classes = [index[str(i)] for i in range(len(index))]
    by_name = {label: i for i, label in enumerate(classes)}
    anchors, _ = _reviewed(meta / "anchor_labels.json")
    pairs, _ = _reviewed(meta / "pmk_labels.json")
    bad = {_key(k.split(",")[0]) for k, labels in pairs.items() if "bad-anchor" in labels}
    valid_pairs = {
        (_key(k.split(",")[0]), _key(k.split(",")[1]))
        for k, labels in pairs.items()
        if "similar" in labels and not labels & set(PROBLEMATIC)
    }
    initial = {}
    with (meta / "ytbb_robustness_test_anchors_full.csv").open(newline="") as handle:
        for row in csv.DictReader(handle):
            label = int(row["label"])
            initial[f"{row['ytid']}_{row['time_ms']}"] = {22: 23, 23: 22}.get(label, label)
    kept: dict[str, list[int]] = {}
    for key, labels in sorted(anchors.items()):
        key = _key(key)
        if "good" not in labels or labels & {"bad", "unsure"} or key in bad:
            continue
        video_ms = key.split("/")[0]
        if video_ms not in initial:
            raise VlstressError(
                f"anchor {key}: no YTBB label in ytbb_robustness_test_anchors_full.csv"
            )
        ids = {by_name[label] for label in labels if label in by_name} | {initial[video_ms]}
        kept[key] = sorted(ids)
    if options.classnames:
        from vlstress.testsets.lists import load_names

        classes = load_names(options.classnames)
        if len(classes) != len(index):
            raise VlstressError(
                f"ytbb-robust has {len(index)} classes; {options.classnames} names {len(classes)}"
            )
    per_class: dict[int, int] = {}
    entries: list[dict[str, Any]] = []
    for anchor, anchor_labels in kept.items():
        first = anchor_labels[0]
        if options.max_per_class is not None and per_class.get(first, 0) >= options.max_per_class:
            continue
        per_class[first] = per_class.get(first, 0) + 1
        video, frame, ms = _frame_parts(anchor)
        entries.append(
            {
                "path": anchor,
                "label": first,
                "labels": anchor_labels,
                "anchor": anchor,
                "offset": 0,
            }
        )
        for offset in [i for i in range(-YTBB_K, YTBB_K + 1) if i != 0]:
            neighbour = f"{video}_{ms}/frame-{frame + offset}.jpg"
            if (anchor, neighbour) in valid_pairs:
                entries.append(
                    {
                        "path": neighbour,
                        "label": first,
                        "labels": anchor_labels,
                        "anchor": anchor,
                        "offset": offset,
                    }
                )
    if not entries:
        raise VlstressError(f"ytbb-robust {meta}: no anchor passes the review")
    missing = [e["path"] for e in entries if not (root / e["path"]).is_file()]
    if missing:
        raise VlstressError(
            f"ytbb-robust: {len(missing)} of {len(entries)} frames named in {meta} are missing "
            f"under {root}: {', '.join(missing[:3])}" + (", ..." if len(missing) > 3 else "")
        )
    check_images(root, entries)
    imagenet = meta / "rev_class_idx_map.json"
    return ClassificationSet(
        dataset=name,
        kind="ytbb-robust",
        classes=classes,
        class_ids=[str(i) for i in range(len(classes))],
        root=str(root),
        images=entries,
        source={
            "root": str(root),
            "metadata": str(meta),
            "n_anchors": len({e["anchor"] for e in entries}),
            "excluded_bad_anchors": len(bad),
            "imagenet_indices": read_json(imagenet, "class map") if imagenet.is_file() else None,
            "reference": "modestyachts/imagenet-testbed src/eval_settings/ytbb_robust.py",
        },
    )
