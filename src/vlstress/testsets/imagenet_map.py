"""Each class of a test set as ImageNet-1k classes: how a supervised ImageNet classifier (a timm
model of the registry) is scored on a set whose classes are not its own.

A class is mapped, in this order, by
- a map the user gives (a json file `{class name or class id: [wnid or index, ...]}`, optionally
  under a `classes` key; `zeroshot.imagenet_maps` in params), which decides every class it names;
- the set's own map `source.imagenet_indices` as a mapping {class index: [ImageNet indices]} (the
  video sets: imagenet-testbed's `rev_class_idx_map.json`; ImageNet-D: its repository's map);
- its class id, when that is an ImageNet wnid (ImageNet, -V2, -Sketch, -R, -A, -C, and every
  corrupted, typographic or stylized copy of them: they keep their source's ids);
- ObjectNet's official mapping (`labelmaps.objectnet_to_imagenet`) for an ObjectNet folder.
A class none of them maps is an error naming it: no class is scored from nothing, except in the
video sets, whose own map leaves some classes without ImageNet classes (YTBB-Robust: 5 of 24): the
testbed scores those -inf, never predicted, and so does this.

The model's score of a class from its ImageNet classes' logits follows one rule (`class_map_rule`,
recorded in the classifier's sidecar and in the records):
- `max-logit`: the largest logit among them, imagenet-testbed's rule for the video sets
  (`src/eval_settings/imagenet_vid_robust.py` and `ytbb_robust.py`, `merge_op='max'` over the
  logits restricted to the set's ImageNet classes; `src/models/model_base.py` line 44) and
  ObjectNet (`src/eval_settings/objectnet.py`: the argmax over the 113 classes' ImageNet logits,
  right when it is one of the image's class's): kinds `MAX_LOGIT_KINDS`;
- `mean-prob`: log(mean exp(logit)), whose softmax over the set's classes is the mean probability of
  each class's ImageNet classes: model-vs-human's rule for the 16 shape-bias categories, and every
  other set;
- `identity`: every class is one ImageNet class, scored by its logit (the ImageNet-R/-A protocol,
  and ImageNet itself), where the two rules agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vlstress.errors import VlstressError
from vlstress.testsets import labelmaps
from vlstress.testsets.manifest import ClassificationSet

# kinds whose classes carry their ImageNet-1k classes (wnid ids, ObjectNet's map, the video maps)
SELF_MAPPED_KINDS = (
    "imagenet",
    "imagenet-v2",
    "imagenet-sketch",
    "imagenet-r",
    "imagenet-a",
    "imagenet-c",
    "objectnet",
    "imagenet-d",
    "imagenet-vid-robust",
    "ytbb-robust",
)
# the video sets (vlstress.testsets.video_kinds): imagenet-testbed takes the max logit
# imagenet-testbed's rule for its video sets and ObjectNet (eval_settings/imagenet_vid_robust.py,
# ytbb_robust.py: merge_op max; objectnet.py: argmax over the 113 classes' ImageNet logits)
MAX_LOGIT_KINDS = ("imagenet-vid-robust", "ytbb-robust", "objectnet")
MAX_LOGIT, MEAN_PROB, IDENTITY = "max-logit", "mean-prob", "identity"
SHIPPED = "data/imagenet_maps"  # maps by name: demo (the demo's objects), coco-supercategories


def shipped() -> list[str]:
    from importlib import resources

    folder = resources.files("vlstress").joinpath(SHIPPED)
    return sorted(
        p.name.removesuffix(".json") for p in folder.iterdir() if p.name.endswith(".json")
    )


def map_path(value: str) -> Path:
    """The file of a map given by path or by the name of a shipped one."""
    from importlib import resources

    if value in shipped():
        return Path(str(resources.files("vlstress").joinpath(f"{SHIPPED}/{value}.json")))
    if not Path(value).is_file():
        raise VlstressError(
            f"ImageNet class map {value!r}: no such file, nor a shipped map "
            f"({', '.join(shipped())})"
        )
    return Path(value)


def read_map(value: str) -> dict[str, list[int]]:
    """A given map (a file, or a shipped map's name) as class -> ImageNet indices; malformed entries
    are named."""
    from vlstress.io import read_json

    path = map_path(value)
    data = read_json(path, "ImageNet class map")
    if isinstance(data, dict) and isinstance(data.get("classes"), dict):
        data = data["classes"]
    if not isinstance(data, dict) or not data:
        raise VlstressError(
            f"ImageNet class map {path}: expected a json object {{class: [wnid or index, ...]}}"
        )
    return {
        str(name): _indices(entries, f"{path}: class {name!r}") for name, entries in data.items()
    }


def _indices(entries: Any, where: str) -> list[int]:
    wnids = {wnid: i for i, wnid in enumerate(labelmaps.imagenet_wnids())}
    if not isinstance(entries, list) or not entries:
        raise VlstressError(f"{where}: expected a non-empty list of ImageNet wnids or indices")
    found = []
    for entry in entries:
        if isinstance(entry, int) and not isinstance(entry, bool) and 0 <= entry < len(wnids):
            found.append(entry)
        elif isinstance(entry, str) and entry in wnids:
            found.append(wnids[entry])
        else:
            raise VlstressError(f"{where}: {entry!r} is no ImageNet-1k wnid or class index (0-999)")
    return sorted(set(found))


def imagenet_classes(
    data: ClassificationSet, given: Mapping[str, Sequence[int]] | None = None
) -> list[list[int]]:
    """The ImageNet-1k indices of each class of `data`, in class order (see the module doc)."""
    wnids = {wnid: i for i, wnid in enumerate(labelmaps.imagenet_wnids())}
    objectnet = labelmaps.objectnet_to_imagenet() if data.kind == "objectnet" else {}
    given = given or {}
    own: dict[int, list[int]] = {}  # class index -> ImageNet indices, from the set's own map
    mapped = (data.source or {}).get("imagenet_indices")
    if isinstance(mapped, dict):
        own = {int(label): sorted(int(i) for i in indices) for label, indices in mapped.items()}
    found: list[list[int]] = []
    missing = []
    video = data.kind in MAX_LOGIT_KINDS and bool(own)
    for label, (name, class_id) in enumerate(zip(data.classes, data.class_ids)):
        if name in given or class_id in given:
            found.append(list(given.get(name, given.get(class_id, []))))
        elif label in own:
            found.append(sorted(own[label]))
        elif video:  # the testbed's -inf: a class its map leaves out is never predicted
            found.append([])
        elif class_id in wnids:
            found.append([wnids[class_id]])
        elif class_id in objectnet:
            found.append(list(objectnet[class_id]))
        else:
            missing.append(name)
    if missing:
        shown = ", ".join(missing[:8]) + (
            f" and {len(missing) - 8} more" if len(missing) > 8 else ""
        )
        raise VlstressError(
            f"test set {data.dataset} (kind {data.kind}): no ImageNet-1k classes for {shown}; a "
            "supervised ImageNet classifier needs them: give a map, zeroshot.imagenet_maps: "
            f'"{data.dataset}=<file>" (a json file {{class: [wnid or index, ...]}}), or leave the '
            "classes out of the test set (keep / drop)"
        )
    return found


def class_map_rule(kind: str, classes: Sequence[Sequence[int]]) -> str:
    """How a set of this kind with these classes (ImageNet indices each) is scored from the 1000
    logits: `max-logit` (the video sets), `identity` (one ImageNet class each), else
    `mean-prob` (see the module doc)."""
    if kind in MAX_LOGIT_KINDS:
        return MAX_LOGIT
    if all(len(indices) == 1 for indices in classes):
        return IDENTITY
    return MEAN_PROB


def class_map_matrix(classes: Sequence[Sequence[int]], n_imagenet: int = 1000) -> np.ndarray:
    """(classes x 1000) float32: row c averages the probabilities of class c's ImageNet classes
    (its members are the nonzero entries; a row of zeros: a class never predicted)."""
    matrix = np.zeros((len(classes), n_imagenet), dtype=np.float32)
    for row, indices in enumerate(classes):
        if len(indices):
            matrix[row, list(indices)] = 1.0 / len(indices)
    return matrix
