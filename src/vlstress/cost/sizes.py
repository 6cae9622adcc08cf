"""How many images (and classes, captions) each set of the params has, without building it.

In this order: a size the caller gives (`--size NAME=N`); the set's built manifest under the
project folder (`data/testsets/<name>/`, `data/ood/<name>/`, `data/shape_bias/cue-conflict/`,
`data/prepared/`) when its provenance matches the params' entry; the images in the dataset's
folder (`root`) when it exists, counted per class folder as its kind reads them (no image is
decoded); else the size the dataset's authors published for the kind, marked `published` (a
`max_per_class` caps it at classes x N; `keep`/`drop` are applied to the offline demo only, so
other published or counted sizes are then upper bounds, said in the note). Otherwise the set is
an error naming it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from vlstress.errors import VlstressError

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")
TESTSETS = "data/testsets"
OOD_SETS = "data/ood"
STIMULI = "data/shape_bias/cue-conflict"
PREPARED = "data/prepared/manifest.json"

# kind -> (images, classes of its classifier, who published the size). ImageNet-C: per
# corruption and severity (a test set of the kind reads one corruption's 5 severities).
PUBLISHED: dict[str, tuple[int, int, str]] = {
    "imagenet": (50_000, 1000, "ILSVRC-2012 val, Russakovsky et al. 2015"),
    "imagenet-v2": (10_000, 1000, "ImageNetV2 matched-frequency, Recht et al. 2019"),
    "imagenet-sketch": (50_889, 1000, "ImageNet-Sketch, Wang et al. 2019"),
    "imagenet-r": (30_000, 200, "ImageNet-R, Hendrycks et al. 2021"),
    "imagenet-a": (7_500, 200, "ImageNet-A, Hendrycks et al. 2021"),
    "objectnet": (18_574, 113, "ObjectNet 1.0, its 113 ImageNet classes (CLIP_benchmark)"),
    "imagenet-c": (50_000, 1000, "ImageNet-C, Hendrycks & Dietterich 2019: 50,000 a severity"),
    "imagenet-vid-robust": (
        22_179,
        30,
        "ImageNet-Vid-Robust, Shankar et al. 2021: 1,109 anchors + 21,070 neighbours",
    ),
    "ninco": (4_293, 46, "NINCO README, Bitterwolf et al. 2023: 46 OOD classes"),
    "ninco-unit-tests": (6_800, 17, "NINCO_OOD_unit_tests.csv: 17 unit tests x 400"),
    "ninco-subsamples": (2_715, 11, "NINCO_popular_datasets_subsamples.csv: 11 sets"),
    "cifar10": (10_000, 10, "CIFAR-10 test split, Krizhevsky 2009"),
    "cifar100": (10_000, 100, "CIFAR-100 test split, Krizhevsky 2009"),
}
IMAGENET_C_SEVERITIES = 5
STIMULI_PUBLISHED = (16, 80, "cue-conflict stimuli, Geirhos et al. 2019: 16 categories x 80")
KARPATHY = (5_000, 25_010, "COCO Karpathy 5k test split: 5,000 images, 25,010 captions")
DEMO_VIEWS = 6  # vlstress.testsets.materialised_kinds.DEMO_VIEWS


@dataclass(frozen=True)
class SetSize:
    """The images of one set and the classes of its classifier."""

    name: str
    kind: str
    images: int
    classes: int
    source: str  # where the count came from
    published: bool = False  # the published size of its kind, not counted here
    note: str = ""


@dataclass(frozen=True)
class DatasetSize:
    """The images and captions of the retrieval dataset."""

    name: str
    kind: str
    images: int
    captions: int
    source: str
    published: bool = False


def _names(value: Any) -> tuple[str, ...] | None:
    """keep/drop as the params write them ("a,b") or as a manifest records them (a list)."""
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else list(value)
    return tuple(str(item).strip() for item in items if str(item).strip())


COMPARED = ("kind", "root", "annotations", "max_per_class", "corruption", "label", "min_size")


def _same_options(recorded: Mapping[str, Any], entry: Mapping[str, Any]) -> bool:
    """Was a manifest built from this params entry? (its provenance records the flags)."""
    for key in COMPARED:
        if key in recorded and key in entry and recorded[key] != entry[key]:
            if key == "root" and str(recorded[key]) == str(entry[key]):
                continue
            return False
    return all(_names(recorded.get(k)) == _names(entry.get(k)) for k in ("keep", "drop"))


def _manifest(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("images"), list) else None


def _visible(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if not p.name.startswith("."))


def count_images(folder: Path) -> int:
    """Image files under `folder`, walked recursively (hidden ones left out)."""
    total = 0
    for path in _visible(folder):
        if path.is_dir():
            total += count_images(path)
        elif path.suffix.lower() in IMAGE_EXTENSIONS:
            total += 1
    return total


def _per_class(folders: Iterable[Path], cap: int | None) -> tuple[int, int]:
    """(images, class folders) over class folders, at most `cap` per class."""
    counts = [count_images(f) for f in folders if f.is_dir()]
    return sum(c if cap is None else min(c, cap) for c in counts), len(counts)


def _subfolders(folder: Path) -> list[Path]:
    return [p for p in _visible(folder) if p.is_dir()]


def _count_folder(kind: str, root: Path, entry: Mapping[str, Any]) -> tuple[int, int] | None:
    """(images, classes) of a kind that reads a local folder, counted as the kind lists it; None
    for kinds that make their images (CIFAR, COCO crops, the demo)."""
    cap = entry.get("max_per_class")
    if kind in ("imagenet", "imagenet-sketch", "imagenet-v2", "imagenet-r", "imagenet-a"):
        images, _ = _per_class(_subfolders(root), cap)
        return images, PUBLISHED[kind][1]
    if kind == "imagefolder":
        return _per_class(_subfolders(root), cap)
    if kind == "imagenet-c":
        corruption = root / str(entry.get("corruption"))
        if not corruption.is_dir():
            raise VlstressError(f"imagenet-c {root}: no folder for corruption {corruption.name!r}")
        folders = [wnid for severity in _subfolders(corruption) for wnid in _subfolders(severity)]
        return _per_class(folders, cap)[0], 1000
    if kind == "objectnet":
        from vlstress.testsets import labelmaps

        base = root / "images" if (root / "images").is_dir() else root
        mapped = labelmaps.objectnet_to_imagenet()
        return _per_class([base / f for f in mapped], cap)[0], len(mapped)
    if kind == "imagenet-d":  # one split: every class folder under the root
        return _per_class(_subfolders(root), cap)[0], 113
    if kind in ("ninco", "ninco-unit-tests"):
        from vlstress.testsets.ood_kinds import PARTS, ninco_classes

        part, status = PARTS[kind]
        wanted = [f for f, (_, s) in ninco_classes().items() if s == status]
        return _per_class([root / part / f for f in wanted], cap)
    if kind == "ninco-subsamples":
        from vlstress.testsets.ood_kinds import SUBSAMPLES

        return _per_class(_subfolders(root / SUBSAMPLES), cap)
    if kind in ("unlabelled-folder", "typographic-folder"):
        return count_images(root), 1
    return None


DEMO_LABELS = {
    "demo-objects": "data/demo_labels.json",
    "demo-train-objects": "data/demo_train_labels.json",
}


def _demo_objects(entry: Mapping[str, Any]) -> tuple[int, int]:
    """The offline demo's images: 6 views of each shipped photo whose class keep/drop leave."""
    labels_file = DEMO_LABELS[str(entry.get("kind"))]
    labels = json.loads(
        resources.files("vlstress").joinpath(labels_file).read_text(encoding="utf-8")
    )["labels"]
    classes = set(labels.values())
    keep, drop = _names(entry.get("keep")), _names(entry.get("drop"))
    if keep is not None:
        classes &= set(keep)
    if drop is not None:
        classes -= set(drop)
    cap = entry.get("max_per_class")
    per_class = DEMO_VIEWS if cap is None else min(cap, DEMO_VIEWS)
    return len(classes) * per_class, len(classes)


def testset_size(
    name: str,
    entry: Mapping[str, Any],
    project: Path,
    folder: str = TESTSETS,
    given: Mapping[str, int] | None = None,
) -> SetSize:
    """The size of a test set (or OOD set) of the params, `entry` its params entry."""
    kind = str(entry.get("kind"))
    published = PUBLISHED.get(kind)
    built = project / folder / name / "manifest.json"
    manifest = _manifest(built)
    if given and name in given:
        classes = len(manifest["classes"]) if manifest else published[1] if published else 0
        return SetSize(name, kind, given[name], classes, "given (--size)")
    if manifest is not None and manifest.get("kind") == kind:
        recorded = (manifest.get("provenance") or {}).get("params") or {}
        if _same_options(recorded, entry):
            classes = len(manifest.get("classes") or [])
            return SetSize(name, kind, len(manifest["images"]), classes, f"manifest {built}")
    keep_drop = entry.get("keep") is not None or entry.get("drop") is not None
    note = "keep/drop not applied (an upper bound)" if keep_drop and kind not in DEMO_LABELS else ""
    root = entry.get("root")
    if root is not None and Path(root).is_dir():
        counted = _count_folder(kind, Path(root), entry)
        if counted is not None:
            return SetSize(name, kind, counted[0], counted[1], f"folder {root}", note=note)
    if kind in DEMO_LABELS:
        images, classes = _demo_objects(entry)
        return SetSize(name, kind, images, classes, f"shipped demo: {images} views of its photos")
    if published is not None:
        images, classes, who = published
        cap = entry.get("max_per_class")
        if kind == "imagenet-c":
            per_severity = images if cap is None else min(images, classes * cap)
            images = per_severity * IMAGENET_C_SEVERITIES
        elif cap is not None and classes * cap < images:
            images = classes * cap
            note = ", ".join(filter(None, [note, f"at most {cap} per class"]))
        return SetSize(name, kind, images, classes, f"published size ({who})", True, note)
    where = f"folder {root} not found" if root is not None else "no root"
    raise VlstressError(
        f"set {name!r} (kind {kind}): no manifest at {built}, {where}, and the kind has no "
        f"published size; build it (vlstress testset) or give its size: --size {name}=N"
    )


def stimuli_size(block: Mapping[str, Any], project: Path) -> SetSize:
    """The cue-conflict stimuli the shape-bias suite embeds (its classifier's 16 categories)."""
    source = str(block.get("source"))
    per_category = block.get("per_category")
    categories, per, who = STIMULI_PUBLISHED
    built = project / STIMULI / "manifest.json"
    manifest = _manifest(built)
    if manifest is not None:
        recorded = (manifest.get("provenance") or {}).get("params") or {}
        if recorded.get("source") == source and recorded.get("per_category") == per_category:
            images = len(manifest["images"])
            return SetSize("cue-conflict", "cue-conflict", images, categories, f"manifest {built}")
    if source == "demo":
        folder = resources.files("vlstress").joinpath("suites/shape_bias/data/demo")
        images, _ = _per_class((Path(str(f)) for f in folder.iterdir()), per_category)
        return SetSize("cue-conflict", "cue-conflict", images, categories, "shipped demo stimuli")
    local = Path(source)
    if "://" not in source and local.is_dir():
        images, _ = _per_class(_subfolders(local), per_category)
        return SetSize("cue-conflict", "cue-conflict", images, categories, f"folder {source}")
    images = categories * (per if per_category is None else min(per, per_category))
    return SetSize(
        "cue-conflict", "cue-conflict", images, categories, f"published size ({who})", True
    )


def dataset_size(block: Mapping[str, Any], project: Path) -> DatasetSize:
    """The retrieval dataset's images and captions."""
    name, kind = str(block.get("name")), str(block.get("kind"))
    max_images = block.get("max_images")
    built = project / PREPARED
    manifest = _manifest(built)
    if manifest is not None and manifest.get("dataset") == name:
        captions = sum(len(entry.get("caption") or []) for entry in manifest["images"])
        return DatasetSize(name, kind, len(manifest["images"]), captions, f"manifest {built}")
    published = False
    if kind == "demo":
        shipped = json.loads(
            resources.files("vlstress")
            .joinpath("data/demo_captions.json")
            .read_text(encoding="utf-8")
        )
        images = len(shipped)
        captions = sum(len(photo["captions"]) for photo in shipped.values())
        source = "shipped demo photos and captions"
    elif kind == "karpathy":
        images, captions, who = KARPATHY
        ids = block.get("image_ids")
        if ids:
            count = len(ids) if isinstance(ids, list) else len(str(ids).split(","))
            captions, images = round(captions * count / images), count
        source, published = f"published size ({who})", True
    elif kind == "coco-dir" and block.get("captions") and Path(block["captions"]).is_file():
        data = json.loads(Path(block["captions"]).read_text(encoding="utf-8"))
        images, captions = len(data.get("images", [])), len(data.get("annotations", []))
        source = f"captions file {block['captions']}"
    else:
        raise VlstressError(
            f"dataset {name!r} (kind {kind}): no prepared manifest at {built} and nothing to "
            "count it from (a coco-dir needs its captions json)"
        )
    if max_images is not None and max_images < images:
        captions, images = round(captions * max_images / images), max_images
    return DatasetSize(name, kind, images, captions, source, published)


COLLECTION = "overlap-train"  # the overlap suite's training collection, as --size names it
RAW = "data/raw"  # where the retrieval dataset's download lands (data/raw/<dataset name>)


@dataclass(frozen=True)
class CollectionSize:
    """The training images of the overlap suite's collection (None: unknown), and whence."""

    images: int | None
    source: str


def collection_size(
    train: Mapping[str, Any],
    dataset: DatasetSize,
    project: Path,
    given: Mapping[str, int] | None = None,
) -> CollectionSize:
    """A folder is counted, an embeddings file's rows read from its header; the retrieval dataset's
    own download (the demo's collection) is the dataset's size; shards are not opened (reading
    every .tar of a web-scale collection is the work being priced): their size is given, or
    `max_images` bounds it."""
    kind, where = str(train.get("kind")), str(train.get("path"))
    cap = train.get("max_images")
    if given and COLLECTION in given:
        return CollectionSize(given[COLLECTION], "given (--size)")
    path = Path(where) if Path(where).is_absolute() else project / where
    found: CollectionSize | None = None
    if kind == "folder" and path.is_dir():
        found = CollectionSize(count_images(path), f"folder {where}")
    elif kind == "folder" and Path(where) == Path(RAW) / dataset.name:
        found = CollectionSize(dataset.images, f"the {dataset.name} dataset's photos")
    elif kind == "embeddings" and path.is_file():
        found = CollectionSize(npy_rows(path), f"embeddings {where}")
    if found is None:
        if cap is None:
            return CollectionSize(None, f"{kind} {where} not counted")
        return CollectionSize(int(cap), f"max_images of {kind} {where} (an upper bound)")
    if cap is not None and found.images is not None and int(cap) < found.images:
        return CollectionSize(int(cap), f"{found.source}, first {cap}")
    return found


def npy_rows(path: Path) -> int:
    """The rows of a .npy file, from its header (NumPy's format: magic, version, header length,
    then the header dict): the cost model reads no array and imports no numpy."""
    import ast
    import struct

    with open(path, "rb") as handle:
        start = handle.read(10)
        if len(start) < 10 or start[:6] != b"\x93NUMPY":
            raise VlstressError(f"{path} is not a .npy file")
        # version 1 stores the header's length in 2 bytes, versions 2 and 3 in 4
        if start[6] == 1:
            length = struct.unpack("<H", start[8:10])[0]
        else:
            length = struct.unpack("<I", start[8:10] + handle.read(2))[0]
        header = handle.read(length)
    try:
        shape = ast.literal_eval(header.decode("latin1"))["shape"]
        return int(shape[0])
    except (ValueError, SyntaxError, KeyError, IndexError, TypeError):
        raise VlstressError(f"{path}: unreadable .npy header") from None


TEMPLATE_SETS = {"openai": 80, "simple": 7, "single": 1}


def template_count(templates: str) -> int:
    """Prompts per class of a template set (vlstress.suites.zeroshot.templates) or file."""
    if templates in TEMPLATE_SETS:
        return TEMPLATE_SETS[templates]
    from vlstress.testsets.lists import read_list

    return len(read_list(templates, "template"))
