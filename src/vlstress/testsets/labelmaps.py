"""The label maps of the ImageNet family, shipped in `vlstress/data/labelmaps/`.

They are data, not code: the 1000 ILSVRC-2012 wnids in class-index order, the official
200-class subsets of ImageNet-R and ImageNet-A, ObjectNet's two mapping files, and ImageNet-D's
class folders with their names and ImageNet classes.
`SOURCES.json` beside them names the public repository, path, commit and sha256 each one
was taken from. Every read checks the file's sha256 against SOURCES.json and its counts,
so a damaged install fails loudly instead of silently shifting labels.

Class names of the 1000 classes come from open_clip (`IMAGENET_CLASSNAMES`, OpenAI's
cleaned names), so prompts match what open_clip's own zero-shot evaluation uses.
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import cache
from importlib import resources
from typing import Any

from vlstress.errors import VlstressError

FOLDER = "data/labelmaps"
N_IMAGENET = 1000
SUBSETS = {"imagenet-r": "imagenet_r_wnids.txt", "imagenet-a": "imagenet_a_wnids.txt"}
N_OBJECTNET_FOLDERS = 313  # every ObjectNet 1.0 class
N_OBJECTNET_MAPPED = 113  # the classes that overlap ImageNet-1k
N_IMAGENET_D = 113  # ImageNet-D's classes (ObjectNet's that overlap ImageNet-1k, renamed in part)


@cache
def sources() -> dict[str, Any]:
    return json.loads(_raw("SOURCES.json"))


def _raw(name: str) -> bytes:
    return resources.files("vlstress").joinpath(f"{FOLDER}/{name}").read_bytes()


@cache
def read(name: str) -> str:
    """A shipped label-map file, after checking its sha256 against SOURCES.json."""
    entry = sources().get(name)
    if entry is None:
        raise VlstressError(f"label map {name} is not listed in {FOLDER}/SOURCES.json")
    data = _raw(name)
    if hashlib.sha256(data).hexdigest() != entry["sha256"]:
        raise VlstressError(
            f"label map {FOLDER}/{name} does not match its sha256 in SOURCES.json: reinstall "
            "vlstress"
        )
    return data.decode("utf-8")


def checksums(*names: str) -> dict[str, str]:
    """sha256 of the label maps a test set used, for its manifest's `source`."""
    return {name: sources()[name]["sha256"] for name in names}


def _expect(count: int, expected: int, what: str) -> None:
    if count != expected:
        raise VlstressError(f"label map {what}: {count} entries, expected {expected}")


@cache
def imagenet_wnids() -> tuple[str, ...]:
    """The 1000 wnids in standard class-index order (which is sorted order)."""
    wnids = tuple(read("imagenet_wnids.txt").split())
    _expect(len(set(wnids)), N_IMAGENET, "imagenet_wnids.txt")
    if list(wnids) != sorted(wnids):
        raise VlstressError("label map imagenet_wnids.txt is not in class-index (sorted) order")
    return wnids


@cache
def subset_indices(kind: str) -> tuple[int, ...]:
    """ImageNet class indices of a 200-class subset, ascending (the subset's own label order)."""
    name = SUBSETS[kind]
    wnids = read(name).split()
    _expect(len(set(wnids)), 200, name)
    index = {wnid: i for i, wnid in enumerate(imagenet_wnids())}
    missing = [wnid for wnid in wnids if wnid not in index]
    if missing:
        raise VlstressError(f"label map {name}: {missing[0]} is not an ImageNet-1k wnid")
    indices = tuple(index[wnid] for wnid in wnids)
    if list(indices) != sorted(indices):
        raise VlstressError(f"label map {name} is not in ImageNet class-index order")
    return indices


@cache
def imagenet_classnames() -> tuple[str, ...]:
    from open_clip.zero_shot_metadata import IMAGENET_CLASSNAMES

    _expect(len(IMAGENET_CLASSNAMES), N_IMAGENET, "open_clip IMAGENET_CLASSNAMES")
    return tuple(IMAGENET_CLASSNAMES)


@cache
def objectnet_folders() -> dict[str, str]:
    """ObjectNet folder -> ObjectNet class name (all 313 classes)."""
    folders = json.loads(read("folder_to_objectnet_label.json"))
    _expect(len(folders), N_OBJECTNET_FOLDERS, "folder_to_objectnet_label.json")
    return folders


@cache
def objectnet_to_imagenet() -> dict[str, list[int]]:
    """ObjectNet folder -> ImageNet class indices, for the 113 classes that overlap ImageNet.

    ObjectNet's map names ImageNet classes by their label text ('; '-separated); the text
    is resolved to an index through `imagenet_to_labels.json` and must match exactly one.
    """
    mapped = json.loads(read("objectnet_to_imagenet_1k.json"))
    _expect(len(mapped), N_OBJECTNET_MAPPED, "objectnet_to_imagenet_1k.json")
    labels = json.loads(read("imagenet_to_labels.json"))
    _expect(len(labels), N_IMAGENET, "imagenet_to_labels.json")
    by_text: dict[str, list[int]] = {}
    for index, text in labels.items():
        by_text.setdefault(text, []).append(int(index))
    folder_of = {label: folder for folder, label in objectnet_folders().items()}
    result = {}
    for label, texts in mapped.items():
        if label not in folder_of:
            raise VlstressError(
                f"label map objectnet_to_imagenet_1k.json: class {label!r} has no ObjectNet folder"
            )
        indices = []
        for text in texts.split("; "):
            if len(by_text.get(text, [])) != 1:
                raise VlstressError(
                    f"label map objectnet_to_imagenet_1k.json: {text!r} is not exactly one "
                    "ImageNet class"
                )
            indices.append(by_text[text][0])
        result[folder_of[label]] = sorted(indices)
    return dict(sorted(result.items()))


@cache
def imagenet_d_synonyms() -> dict[str, tuple[str, ...]]:
    """ImageNet-D class name -> the other words its LLaVA evaluation accepts for the class in an
    answer (`imagenet_d_synonyms.json`, from the ImageNet-D repository), e.g. still camera ->
    camera."""
    found = json.loads(read("imagenet_d_synonyms.json"))
    # the evaluation spells a few names otherwise (`t shirt`, `coffee or french press`): keyed by
    # the class names as the imagenet-d kind writes them (`t-shirt`, `coffee/french press`)
    names = {_words(name.replace("_", " ")): name.replace("_", " ")
             for name, _ in imagenet_d_classes().values()}  # fmt: skip
    unknown = [name for name in found if _words(name) not in names]
    if unknown:
        raise VlstressError(f"label map imagenet_d_synonyms.json: no ImageNet-D class {unknown}")
    return {names[_words(name)]: tuple(words) for name, words in found.items()}


def _words(name: str) -> tuple[str, ...]:
    """A class name's words, whatever joins them (space, `-`, `/`, ` or `)."""
    return tuple(w for w in re.split(r"[\s/-]+", name.casefold()) if w and w != "or")


@cache
def imagenet_d_classes() -> dict[str, tuple[str, list[int]]]:
    """ImageNet-D class folder -> (its name, its ImageNet-1k class indices), in ImageNet-D's id
    order (`imagenet_d_classes.json`, from the ImageNet-D repository)."""
    found = json.loads(read("imagenet_d_classes.json"))
    _expect(len(found), N_IMAGENET_D, "imagenet_d_classes.json")
    if [entry["id"] for entry in found.values()] != list(range(N_IMAGENET_D)):
        raise VlstressError("label map imagenet_d_classes.json is not in ImageNet-D's id order")
    return {folder: (entry["name"], list(entry["imagenet"])) for folder, entry in found.items()}
