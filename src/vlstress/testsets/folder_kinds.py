"""Test-set kinds read in place from a local folder: the manifest lists the files under --root.

ImageNet family (labels index the 1000 ILSVRC-2012 classes in standard order; names from
open_clip's IMAGENET_CLASSNAMES, or --classnames):

- `imagenet`: validation layout `<root>/<wnid>/*.JPEG`. Strict: a folder that is not one of
  the 1000 wnids is an error naming it. The class list is always all 1000 classes (the
  zero-shot problem is 1000-way); wnids without a folder are allowed and recorded in
  `source.classes_without_images`, so a subset of ImageNet val still scores 1000-way.
- `imagenet-sketch`: the same layout (`sketch/<wnid>/*.JPEG`).
- `imagenet-v2`: folders named by class index `0`..`999` (numeric: folder `10` is class 10).
- `imagenet-r`, `imagenet-a`: wnid folders; the classes are the official 200 of each set, in
  ImageNet index order (labels 0..199); `source.imagenet_indices` gives each one's ImageNet index.
- `imagenet-c`: `<root>/<corruption>/<severity>/<wnid>/*.JPEG`; --corruption picks one
  corruption, all severity folders (1..5) are read and each entry carries `severity`.

`imagefolder`: class-per-folder. When every folder is an ImageNet wnid it is read exactly as
`imagenet` (1000 classes). Otherwise, or whenever --classnames is given, it is generic: the
classes are the sorted folder names, named by the folder (underscores -> spaces) or by the
class-name file (one name per sorted folder). So: kind `imagenet` forces the wnid layout;
`imagefolder` with --classnames forces the generic one.

`objectnet`: `<root>/images/<folder>/*.png` (the unzipped `objectnet-1.0/`) or
`<root>/<folder>/*.png`. Protocol as in CLIP_benchmark (after wise-ft): a zero-shot
classifier over the 113 ObjectNet classes that overlap ImageNet-1k, ordered by folder name
and named by ObjectNet's own class name (lower case); images of the other 200 folders are
skipped and counted in `source`. `source.imagenet_indices` maps each class to its ImageNet
indices (ObjectNet's `objectnet_to_imagenet_1k.json`) for scoring with a 1000-way head.
ObjectNet images carry a thin red border; evaluations that follow ImageNet-testbed crop
2 pixels from each side before preprocessing (recorded as `source.border_crop_px`; the files
are listed unchanged).

`imagenet-d`: one split of ImageNet-D (Zhang et al., CVPR 2024; diffusion-made images of
ObjectNet's 113 ImageNet classes on new backgrounds, textures or materials): `<root>/<class
folder>/*` with root the split folder (`ImageNet-D/background`, `texture` or `material`; a root
holding the split folders is refused, naming them). The classes are ImageNet-D's 113 in its id
order, named by its own names (underscores -> spaces); a folder that is not one of them is an
error naming it. `source.imagenet_indices` gives each class's ImageNet-1k classes (its
repository's map), for a supervised ImageNet classifier.

`typographic-folder`: real typographic-attack photos named `label=<class>_text=<written>.<ext>`
(the PAINT / RTA-100 naming), flat or nested; classes are the sorted union of true and
written class names (underscores -> spaces); each entry carries `written`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from vlstress.errors import VlstressError
from vlstress.testsets import labelmaps
from vlstress.testsets.building import (
    WNID,
    Options,
    check_images,
    class_names,
    classes_without_images,
    distinct,
    keep_first,
    name_from_folder,
    require_root,
    scan,
    subfolders,
    unknown_error,
)
from vlstress.testsets.manifest import ClassificationSet

IMAGENET_MAPS = ("imagenet_wnids.txt",)
TYPOGRAPHIC_NAME = re.compile(r"label=(?P<label>.+?)_text=(?P<written>.+)")


def _finish(
    name: str,
    kind: str,
    root: Path,
    classes: list[str],
    class_ids: list[str],
    entries: list[dict[str, Any]],
    options: Options,
    source: dict[str, Any],
    group: str | None = None,
) -> ClassificationSet:
    """Apply --max-per-class (per group, e.g. severity), decode every kept image, build the set."""
    if group is None:
        kept = keep_first(entries, options.max_per_class)
    else:
        kept = [
            e
            for value in sorted({e[group] for e in entries})
            for e in keep_first([e for e in entries if e[group] == value], options.max_per_class)
        ]
    check_images(root, kept)
    source = {
        "root": str(root),
        **source,
        "classes_without_images": classes_without_images(class_ids, kept, f"{kind} {root}"),
    }
    return ClassificationSet(
        dataset=name,
        kind=kind,
        classes=classes,
        class_ids=class_ids,
        root=str(root),
        images=kept,
        source=source,
    )


def _wnid_labels(base: Path, what: str, allowed: list[str], expected: str) -> dict[str, int]:
    """folder -> label for wnid folders; a folder outside `allowed` is an error naming it."""
    index = {wnid: label for label, wnid in enumerate(allowed)}
    folders = subfolders(base)
    unknown = [folder for folder in folders if folder not in index]
    if unknown:
        known = set(labelmaps.imagenet_wnids())
        outside = [folder for folder in unknown if folder in known]
        raise unknown_error(
            what, base, outside or unknown, expected if outside else "an ImageNet-1k wnid"
        )
    return {folder: index[folder] for folder in folders}


def _imagenet_names(options: Options) -> list[str]:
    return class_names(options.classnames, list(labelmaps.imagenet_classnames()))


def build_imagenet(name: str, options: Options, kind: str = "imagenet") -> ClassificationSet:
    root = require_root(options, kind)
    wnids = list(labelmaps.imagenet_wnids())
    entries = scan(root, root, _wnid_labels(root, kind, wnids, "an ImageNet-1k wnid"), kind)
    source = {"layout": "<wnid>/*", "label_maps": labelmaps.checksums(*IMAGENET_MAPS)}
    return _finish(name, kind, root, _imagenet_names(options), wnids, entries, options, source)


def build_imagenet_sketch(name: str, options: Options) -> ClassificationSet:
    return build_imagenet(name, options, kind="imagenet-sketch")


def build_imagenet_v2(name: str, options: Options) -> ClassificationSet:
    root = require_root(options, "imagenet-v2")
    folders = subfolders(root)
    bad = [f for f in folders if not (f.isdigit() and str(int(f)) == f and int(f) < 1000)]
    if bad:
        raise unknown_error("imagenet-v2", root, bad, "a class index 0..999")
    entries = scan(root, root, {f: int(f) for f in folders}, "imagenet-v2")
    source = {"layout": "<class index>/*", "label_maps": labelmaps.checksums(*IMAGENET_MAPS)}
    return _finish(
        name,
        "imagenet-v2",
        root,
        _imagenet_names(options),
        list(labelmaps.imagenet_wnids()),
        entries,
        options,
        source,
    )


def _build_subset(name: str, options: Options, kind: str) -> ClassificationSet:
    root = require_root(options, kind)
    indices = list(labelmaps.subset_indices(kind))
    all_wnids = labelmaps.imagenet_wnids()
    wnids = [all_wnids[i] for i in indices]
    entries = scan(
        root, root, _wnid_labels(root, kind, wnids, f"one of the 200 {kind} classes"), kind
    )
    own = [labelmaps.imagenet_classnames()[i] for i in indices]
    names = class_names(options.classnames, own, full_indices=indices)
    source = {
        "layout": "<wnid>/*",
        "imagenet_indices": indices,
        "label_maps": labelmaps.checksums(*IMAGENET_MAPS, labelmaps.SUBSETS[kind]),
    }
    return _finish(name, kind, root, names, wnids, entries, options, source)


def build_imagenet_r(name: str, options: Options) -> ClassificationSet:
    return _build_subset(name, options, "imagenet-r")


def build_imagenet_a(name: str, options: Options) -> ClassificationSet:
    return _build_subset(name, options, "imagenet-a")


def build_imagenet_c(name: str, options: Options) -> ClassificationSet:
    root = require_root(options, "imagenet-c")
    available = subfolders(root)
    if options.corruption is None or options.corruption not in available:
        given = (
            "no --corruption given"
            if options.corruption is None
            else f"corruption folder {options.corruption!r} not found"
        )
        raise VlstressError(
            f"imagenet-c {root}: {given}; folders there: {', '.join(available) or 'none'}"
        )
    folder = root / options.corruption
    severities = subfolders(folder)
    if not severities:
        raise VlstressError(f"imagenet-c {folder}: no severity folders 1..5")
    bad = [s for s in severities if s not in {"1", "2", "3", "4", "5"}]
    if bad:
        raise unknown_error("imagenet-c", folder, bad, "a severity 1..5")
    wnids = list(labelmaps.imagenet_wnids())
    entries = []
    for severity in severities:
        base = folder / severity
        entries += scan(
            root,
            base,
            _wnid_labels(base, "imagenet-c", wnids, "an ImageNet-1k wnid"),
            "imagenet-c",
            severity=int(severity),
        )
    source = {
        "layout": "<corruption>/<severity>/<wnid>/*",
        "corruption": options.corruption,
        "severities": [int(s) for s in severities],
        "label_maps": labelmaps.checksums(*IMAGENET_MAPS),
    }
    return _finish(
        name,
        "imagenet-c",
        root,
        _imagenet_names(options),
        wnids,
        entries,
        options,
        source,
        group="severity",
    )


def build_imagefolder(name: str, options: Options) -> ClassificationSet:
    root = require_root(options, "imagefolder")
    folders = subfolders(root)
    wnids = set(labelmaps.imagenet_wnids())
    if (
        options.classnames is None
        and folders
        and all(WNID.fullmatch(f) and f in wnids for f in folders)
    ):
        data = build_imagenet(name, options, kind="imagefolder")
        data.source["layout"] = "<wnid>/* (ImageNet-1k wnids: read as kind imagenet)"
        return data
    if not folders:
        raise VlstressError(f"imagefolder {root}: no class folders")
    entries = scan(root, root, {f: label for label, f in enumerate(folders)}, "imagefolder")
    own = distinct([name_from_folder(f) for f in folders], f"imagefolder {root}", folders)
    names = class_names(options.classnames, own, ids=folders)
    source = {"layout": "<class folder>/* (sorted folder names)", "classnames": options.classnames}
    return _finish(name, "imagefolder", root, names, folders, entries, options, source)


def build_objectnet(name: str, options: Options) -> ClassificationSet:
    from torchvision.datasets.folder import IMG_EXTENSIONS

    root = require_root(options, "objectnet")
    base = root / "images" if (root / "images").is_dir() else root
    all_folders = labelmaps.objectnet_folders()
    mapped = labelmaps.objectnet_to_imagenet()  # folder -> ImageNet indices, sorted by folder
    folders = subfolders(base)
    unknown = [f for f in folders if f not in all_folders]
    if unknown:
        raise unknown_error("objectnet", base, unknown, "an ObjectNet class folder")
    class_ids = list(mapped)
    labels = {folder: class_ids.index(folder) for folder in folders if folder in mapped}
    entries = scan(root, base, labels, "objectnet")
    skipped = [f for f in folders if f not in mapped]
    n_skipped = sum(
        1
        for f in skipped
        for p in (base / f).rglob("*")
        if p.is_file() and p.suffix.lower() in IMG_EXTENSIONS
    )
    own = [all_folders[folder].lower() for folder in class_ids]
    source = {
        "layout": f"{'images/' if base != root else ''}<folder>/*",
        "protocol": (
            "113 ObjectNet classes overlapping ImageNet-1k (CLIP_benchmark); other folders skipped"
        ),
        "imagenet_indices": [mapped[folder] for folder in class_ids],
        "skipped_folders": len(skipped),
        "skipped_images": n_skipped,
        "border_crop_px": 2,
        "label_maps": labelmaps.checksums(
            "folder_to_objectnet_label.json",
            "objectnet_to_imagenet_1k.json",
            "imagenet_to_labels.json",
        ),
    }
    return _finish(
        name,
        "objectnet",
        root,
        class_names(options.classnames, own),
        class_ids,
        entries,
        options,
        source,
    )


IMAGENET_D_SPLITS = ("background", "texture", "material")


def build_imagenet_d(name: str, options: Options) -> ClassificationSet:
    root = require_root(options, "imagenet-d")
    classes = labelmaps.imagenet_d_classes()
    folders = subfolders(root)
    splits = [f for f in folders if f in IMAGENET_D_SPLITS]
    if splits:
        raise VlstressError(
            f"imagenet-d {root} holds the split folders {', '.join(splits)}: give one split as "
            f"the root (e.g. {root / splits[0]}), one test set each"
        )
    unknown = [f for f in folders if f not in classes]
    if unknown:
        raise unknown_error("imagenet-d", root, unknown, "an ImageNet-D class folder")
    class_ids = list(classes)
    entries = scan(root, root, {f: class_ids.index(f) for f in folders}, "imagenet-d")
    own = [classes[folder][0].replace("_", " ") for folder in class_ids]
    source = {
        "layout": "<split>/<class folder>/* (root: the split)",
        "split": root.name,
        "imagenet_indices": {
            str(label): classes[folder][1] for label, folder in enumerate(class_ids)
        },
        "label_maps": labelmaps.checksums("imagenet_d_classes.json"),
    }
    return _finish(
        name,
        "imagenet-d",
        root,
        class_names(options.classnames, own),
        class_ids,
        entries,
        options,
        source,
    )


def build_typographic_folder(name: str, options: Options) -> ClassificationSet:
    from torchvision.datasets.folder import IMG_EXTENSIONS

    root = require_root(options, "typographic-folder")
    files = sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and p.suffix.lower() in IMG_EXTENSIONS and not p.name.startswith(".")
    )
    if not files:
        raise VlstressError(f"typographic-folder {root}: no images")
    parsed = []
    for path in files:
        match = TYPOGRAPHIC_NAME.fullmatch(path.stem)
        if match is None:
            raise VlstressError(
                f"typographic-folder: image {path} is not named label=<class>_text=<written>.<ext>"
            )
        parsed.append(
            (
                path.relative_to(root).as_posix(),
                name_from_folder(match["label"]),
                name_from_folder(match["written"]),
            )
        )
    classes = sorted({true for _, true, _ in parsed} | {written for _, _, written in parsed})
    index = {cls: label for label, cls in enumerate(classes)}
    entries = [
        {"path": path, "label": index[true], "written": index[written]}
        for path, true, written in parsed
    ]
    source = {"layout": "label=<class>_text=<written>.<ext>", "n_files": len(files)}
    return _finish(
        name,
        "typographic-folder",
        root,
        class_names(options.classnames, classes),
        classes,
        entries,
        options,
        source,
    )
