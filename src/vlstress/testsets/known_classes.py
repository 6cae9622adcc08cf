"""A test set's classes told from its params entry alone, for the kinds whose classes are package
data (no image read, no model library), so the params check can compare two sets before any
step runs (an OOD set must share no class with the in-distribution set). Other kinds are known
only once built: the step that builds them checks them."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from vlstress.testsets.manifest import ClassificationSet, select_classes

# the labels file of each kind that has one (vlstress.testsets.materialised_kinds; a test builds
# each and compares its classes)
LABELS = {
    "demo-objects": "data/demo_labels.json",
    "demo-train-objects": "data/demo_train_labels.json",
}


def _names(value: Any) -> list[str] | None:
    """A params `keep`/`drop` (`a,b`, a list or null) as the testset step reads it."""
    if value is None:
        return None
    parts = value.split(",") if isinstance(value, str) else [str(v) for v in value]
    return [part.strip() for part in parts if part.strip()] or None


def known_set(entry: dict[str, Any], name: str) -> ClassificationSet | None:
    """Test set `name` (its params entry `entry`) after its keep and drop, its classes as its
    testset step would write them and one placeholder image per class; None where only building
    the set tells. A keep or drop that names no class is a VlstressError naming the set, as the
    step's."""
    labels_file = LABELS.get(entry.get("kind", ""))
    if labels_file is None or entry.get("classnames") is not None:
        return None
    labels = json.loads(
        resources.files("vlstress").joinpath(labels_file).read_text(encoding="utf-8")
    )["labels"]
    names = sorted(set(labels.values()))
    photo_of = {label: photo for photo, label in labels.items()}
    data = ClassificationSet(
        dataset=name,
        kind=entry["kind"],
        classes=names,
        class_ids=[photo_of[c] for c in names],
        root="",
        images=[{"path": "", "label": label} for label in range(len(names))],
    )
    return select_classes(data, _names(entry.get("keep")), _names(entry.get("drop")))
