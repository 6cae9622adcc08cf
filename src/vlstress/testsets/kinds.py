"""Registry of classification test-set kinds: each builds the canonical manifest (.manifest).

A kind is one function `build(name, options) -> ClassificationSet`. Kinds that read a
local dataset in place list its files (folder_kinds: the ImageNet family, ObjectNet,
class-per-folder, typographic-attack photos; ood_kinds: NINCO's three parts, unlabelled
folders); kinds that produce their images write them
as PNG under <out>/images/ (materialised_kinds: CIFAR, COCO object crops, the offline
demo). Every kind honours --max-per-class (first N per class, in sorted path order, or the
order its module documents) and checks that each listed image decodes.

Adding a kind is one function and one entry in KINDS. Importing this module stays light:
torchvision and open_clip are imported inside the builders.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from vlstress.errors import VlstressError
from vlstress.testsets import folder_kinds as folders
from vlstress.testsets import materialised_kinds as materialised
from vlstress.testsets import ood_kinds as ood
from vlstress.testsets import video_kinds as video
from vlstress.testsets.building import Options
from vlstress.testsets.manifest import ClassificationSet

__all__ = ["KINDS", "Kind", "Options", "build"]

OPTIONAL = ("root", "annotations", "classnames", "corruption")  # flags a kind may not use


@dataclass(frozen=True)
class Kind:
    build: Callable[[str, Options], ClassificationSet]
    description: str
    uses: frozenset[str]  # which of OPTIONAL the kind reads; giving another one is an error
    materialises: bool = False  # writes its images under <out>/images/


def _kind(build, description: str, *uses: str, materialises: bool = False) -> Kind:
    return Kind(build, description, frozenset(uses), materialises)


KINDS: dict[str, Kind] = {
    "imagefolder": _kind(
        folders.build_imagefolder,
        "class-per-folder (ImageNet wnid folders are read as imagenet)",
        "root",
        "classnames",
    ),
    "imagenet": _kind(
        folders.build_imagenet,
        "ImageNet val layout <wnid>/*.JPEG, 1000 classes",
        "root",
        "classnames",
    ),
    "imagenet-v2": _kind(
        folders.build_imagenet_v2, "ImageNetV2: folders 0..999 by class index", "root", "classnames"
    ),
    "imagenet-sketch": _kind(
        folders.build_imagenet_sketch,
        "ImageNet-Sketch: <wnid>/*, 1000 classes",
        "root",
        "classnames",
    ),
    "imagenet-r": _kind(
        folders.build_imagenet_r, "ImageNet-R: <wnid>/*, its 200 classes", "root", "classnames"
    ),
    "imagenet-a": _kind(
        folders.build_imagenet_a, "ImageNet-A: <wnid>/*, its 200 classes", "root", "classnames"
    ),
    "imagenet-c": _kind(
        folders.build_imagenet_c,
        "ImageNet-C: <corruption>/<severity>/<wnid>/*, one corruption",
        "root",
        "classnames",
        "corruption",
    ),
    "objectnet": _kind(
        folders.build_objectnet,
        "ObjectNet: the 113 classes that overlap ImageNet",
        "root",
        "classnames",
    ),
    "imagenet-d": _kind(
        folders.build_imagenet_d,
        "ImageNet-D: one split (background, texture, material), <class folder>/*, 113 classes",
        "root",
        "classnames",
    ),
    "typographic-folder": _kind(
        folders.build_typographic_folder,
        "photos named label=<class>_text=<written>.<ext>",
        "root",
        "classnames",
    ),
    "imagenet-vid-robust": _kind(
        video.build_imagenet_vid_robust,
        "ImageNet-Vid-Robust: anchor frames and their neighbours (testbed metadata + frames)",
        "root",
        "annotations",
        "classnames",
    ),
    "ytbb-robust": _kind(
        video.build_ytbb_robust,
        "YTBB-Robust: reviewed anchors and their similar neighbours (testbed metadata + frames)",
        "root",
        "annotations",
        "classnames",
    ),
    "ninco": _kind(
        ood.build_ninco,
        "NINCO: its 46 OOD classes (NINCO_OOD_classes/<folder>/*), by NINCO's print names",
        "root",
        "classnames",
    ),
    "ninco-unit-tests": _kind(
        ood.build_ninco_unit_tests,
        "NINCO's 17 synthetic OOD unit tests (NINCO_OOD_unit_tests/<test>/*)",
        "root",
        "classnames",
    ),
    "ninco-subsamples": _kind(
        ood.build_ninco_subsamples,
        "NINCO's 11 cleaned popular OOD sets, one class each (NINCO_popular_datasets_subsamples/)",
        "root",
        "classnames",
    ),
    "unlabelled-folder": _kind(
        ood.build_unlabelled_folder,
        "any folder of images without labels (all in one class): an OOD set",
        "root",
        "classnames",
    ),
    "cifar10": _kind(
        materialised.build_cifar10,
        "CIFAR-10 test split (torchvision download into --root)",
        "root",
        "classnames",
        materialises=True,
    ),
    "cifar100": _kind(
        materialised.build_cifar100,
        "CIFAR-100 test split (torchvision download into --root)",
        "root",
        "classnames",
        materialises=True,
    ),
    "coco-objects": _kind(
        materialised.build_coco_objects,
        "crops of the object boxes of a COCO instances json",
        "root",
        "annotations",
        "classnames",
        materialises=True,
    ),
    "demo-objects": _kind(
        materialised.build_demo_objects,
        "offline demo: 14 labelled scikit-image photos x 6 views",
        materialises=True,
    ),
    "demo-train-objects": _kind(
        materialised.build_demo_train_objects,
        "offline demo's training classes: the 8 other scikit-image photos x 6 views (FLYP)",
        materialises=True,
    ),
}


def build(kind: str, name: str, options: Options) -> ClassificationSet:
    """The manifest of test set `name` of `kind` (images written under options.out when the kind
    materialises)."""
    if kind not in KINDS:
        raise VlstressError(f"unknown test-set kind {kind!r}: use one of {', '.join(KINDS)}")
    entry = KINDS[kind]
    if options.label not in ("category", "supercategory"):
        raise VlstressError(f"--label must be category or supercategory, not {options.label!r}")
    unused = [
        flag for flag in OPTIONAL if getattr(options, flag) is not None and flag not in entry.uses
    ]
    if unused:
        raise VlstressError(f"test-set kind {kind} does not use --{unused[0]} (set it to null)")
    return entry.build(name, options)
