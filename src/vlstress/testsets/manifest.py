"""The canonical labelled manifest of a classification test set (every kind writes it).

    {"schema": "vlstress.classification/1",
     "dataset": "imagenet-r", "kind": "imagenet-r",
     "classes": ["goldfish", ...],          # class names, index = label (the zero-shot prompts
                                            # use them)
     "class_ids": ["n01443537", ...],       # the source's id of each class (wnid, folder name,
                                            # category id)
     "superclasses": null | ["fish", ...],  # optional coarser name of each class
     "root": "data/classification/x",       # folder the image paths are relative to
     "images": [{"path": "n01443537/a.jpg", "label": 0}, ...],
     "source": {...},                       # where the files and the label map came from
     "provenance": {...}}

An image entry may carry more keys, and derived sets (corruptions, typographic attacks)
add theirs: `written` (label index of the class name written on the image),
`severity` (corruption severity). Labels index `classes`; restricting a 200-class
subset such as ImageNet-R to its 200 classes is simply a manifest whose `classes` are
those 200 (zero-shot weights of a class do not depend on the other classes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vlstress.errors import VlstressError
from vlstress.io import read_json, write_json

SCHEMA = "vlstress.classification/1"


@dataclass
class ClassificationSet:
    dataset: str
    kind: str
    classes: list[str]
    class_ids: list[str]
    root: str
    images: list[dict[str, Any]]
    superclasses: list[str] | None = None
    source: dict[str, Any] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)

    @property
    def labels(self) -> list[int]:
        return [entry["label"] for entry in self.images]

    def image_paths(self) -> list[Path]:
        root = Path(self.root)
        return [root / entry["path"] for entry in self.images]

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "dataset": self.dataset,
            "kind": self.kind,
            "classes": self.classes,
            "class_ids": self.class_ids,
            "superclasses": self.superclasses,
            "root": self.root,
            "images": self.images,
            "source": self.source,
            "provenance": self.provenance,
        }

    def derived(
        self,
        dataset: str,
        kind: str,
        root: str,
        images: list[dict[str, Any]],
        source: dict[str, Any],
        provenance: dict[str, Any] | None = None,
    ) -> ClassificationSet:
        """A set made from this one's images (corrupted, overlaid, stylized, perturbed): the same
        classes, its own images under `root`, a source that names this set first."""
        return ClassificationSet(
            dataset=dataset,
            kind=kind,
            classes=self.classes,
            class_ids=self.class_ids,
            superclasses=self.superclasses,
            root=root,
            images=images,
            source={"clean_dataset": self.dataset, "clean_root": self.root, **source},
            provenance=provenance or {},
        )


def duplicate_names(classes: Sequence[str]) -> dict[str, list[int]]:
    """Class names equal after case folding and whitespace collapsing, with their positions."""
    rows: dict[str, list[int]] = {}
    for i, name in enumerate(classes):
        rows.setdefault(" ".join(name.casefold().split()), []).append(i)
    return {classes[found[0]]: found for found in rows.values() if len(found) > 1}


def shared_classes(data: ClassificationSet, other: ClassificationSet) -> list[str]:
    """The class names of `data` that `other` has too (after case folding and whitespace
    collapsing), every one, in `data`'s order."""
    theirs = {" ".join(name.casefold().split()) for name in other.classes}
    return [name for name in data.classes if " ".join(name.casefold().split()) in theirs]


def check(data: ClassificationSet, source: str) -> ClassificationSet:
    """Raise a VlstressError naming `source` and the first inconsistency."""
    n = len(data.classes)
    if n == 0:
        raise VlstressError(f"{source}: no classes")
    if len(data.class_ids) != n:
        raise VlstressError(f"{source}: {len(data.class_ids)} class ids for {n} classes")
    if data.superclasses is not None and len(data.superclasses) != n:
        raise VlstressError(f"{source}: {len(data.superclasses)} superclasses for {n} classes")
    if not data.images:
        raise VlstressError(f"{source}: no images")
    for pos, entry in enumerate(data.images):
        if not isinstance(entry, dict) or "path" not in entry or "label" not in entry:
            raise VlstressError(
                f"{source}: image entry {pos} lacks 'path' or 'label': {str(entry)[:120]}"
            )
        for key in ("label", "written"):
            value = entry.get(key)
            if value is not None and (
                not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < n
            ):
                raise VlstressError(
                    f"{source}: image {entry['path']}: {key} {value!r} is not a class index "
                    f"(0..{n - 1})"
                )
    return data


def write(path: str | Path, data: ClassificationSet) -> None:
    check(data, f"classification manifest {path}")
    write_json(path, data.to_dict())


MANIFEST_NAME = "manifest.json"


def manifest_path(path: str | Path) -> Path:
    """A test-set folder (as the workflow passes it) or its manifest file."""
    path = Path(path)
    return path / MANIFEST_NAME if path.is_dir() else path


def load(path: str | Path) -> ClassificationSet:
    """The manifest of a test-set folder (`<dir>/manifest.json`) or a manifest file."""
    path = manifest_path(path)
    raw = read_json(path, "classification manifest")
    if not isinstance(raw, dict) or raw.get("schema") != SCHEMA:
        raise VlstressError(
            f"classification manifest {path}: expected schema {SCHEMA!r}; build it with "
            "`vlstress testset`"
        )
    fields: dict[str, Any] = {
        key: raw.get(key)
        for key in ("dataset", "kind", "classes", "class_ids", "root", "images", "superclasses")
    }
    data = ClassificationSet(
        **fields, source=raw.get("source") or {}, provenance=raw.get("provenance") or {}
    )
    return check(data, f"classification manifest {path}")


def select_classes(
    data: ClassificationSet, keep: list[str] | None, drop: list[str] | None
) -> ClassificationSet:
    """The set restricted to some classes: `keep` and `drop` name classes, class ids or
    superclasses (a superclass selects all its classes). Labels are renumbered in the
    original class order; images of dropped classes leave the manifest. A name that matches nothing
    is an error (a typo would otherwise select nothing or everything).
    """
    keep_names, drop_names = keep or None, drop or None
    if keep_names is None and drop_names is None:
        return data
    supers: Sequence[str | None] = data.superclasses or [None] * len(data.classes)

    def matches(names: list[str], what: str) -> set[int]:
        found: set[int] = set()
        for name in names:
            hits = {
                i
                for i, (cls, cid, sup) in enumerate(zip(data.classes, data.class_ids, supers))
                if name in (cls, cid, sup)
            }
            if not hits:
                known = sorted(set(data.classes) | {s for s in supers if s})
                raise VlstressError(
                    f"test set {data.dataset}: {what} {name!r} is no class, class id or "
                    f"superclass; known: {', '.join(known[:30])}"
                )
            found |= hits
        return found

    chosen = matches(keep_names, "--keep") if keep_names else set(range(len(data.classes)))
    if drop_names:
        chosen -= matches(drop_names, "--drop")
    if not chosen:
        raise VlstressError(
            f"test set {data.dataset}: --keep {keep!r} and --drop {drop!r} leave no class"
        )
    old = sorted(chosen)
    new_label = {label: i for i, label in enumerate(old)}
    images = [
        {**entry, "label": new_label[entry["label"]]}
        for entry in data.images
        if entry["label"] in new_label
    ]
    if not images:
        raise VlstressError(f"test set {data.dataset}: the classes kept have no images")
    for entry in images:
        if entry.get("written") is not None:
            raise VlstressError(
                f"test set {data.dataset}: class selection of a typographic set is not supported"
            )
    return ClassificationSet(
        dataset=data.dataset,
        kind=data.kind,
        classes=[data.classes[i] for i in old],
        class_ids=[data.class_ids[i] for i in old],
        root=data.root,
        images=images,
        superclasses=[data.superclasses[i] for i in old] if data.superclasses else None,
        source={
            **data.source,
            "selected": {
                "keep": keep_names,
                "drop": drop_names,
                "classes": len(old),
                "of": len(data.classes),
            },
        },
        provenance=data.provenance,
    )
