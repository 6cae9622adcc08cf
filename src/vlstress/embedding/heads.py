"""A classification head carried by an image-text checkpoint: a bias-free Linear layer from the
normalised image embedding to class logits, with its class names.

A fine-tuning that trains the image tower through such a head (standard fine-tuning, as WiSE-FT
does it: the head starts as the zero-shot classifier times the logit scale) writes it into the
model's safetensors file: the weight under `HEAD_KEY` and the class names in the file's metadata
(`CLASSES_KEY`, a JSON list). The checkpoint's sha256, pinned by the model card, so covers the
head too. `load` builds the open_clip model, loads the other tensors strictly and attaches the
head as `model.vlstress_head`; open_clip's own loader would refuse the extra key (drop it, or load
with strict=False, to use the towers alone).

Where a test set's classes are all classes of the head, its classifier is the head's rows of
them (logit scale 1: the rows hold the scale), so every suite scores the model through the head
it was trained with; on other classes it is a zero-shot model (`rows_for` returns None).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from vlstress.errors import VlstressError

ATTRIBUTE = "vlstress_head"
HEAD_KEY = f"{ATTRIBUTE}.weight"
CLASSES_KEY = "vlstress_head_classes"
HEADER_LIMIT = 100_000_000  # safetensors' own bound on a header's size (bytes)


def attach(model, weights, classes: list[str]) -> None:
    """Give `model` a trainable head of `weights` (classes x embedding width) for `classes`."""
    import torch

    weights = torch.as_tensor(np.asarray(weights, dtype=np.float32))
    if weights.ndim != 2 or weights.shape[0] != len(classes):
        raise VlstressError(
            f"a head needs one row per class: {tuple(weights.shape)} for {len(classes)} classes"
        )
    head = torch.nn.Linear(weights.shape[1], weights.shape[0], bias=False)
    with torch.no_grad():
        head.weight.copy_(weights)
    head.to(next(model.parameters()).device)
    setattr(model, ATTRIBUTE, head)
    model.vlstress_head_classes = list(classes)


def of(model) -> tuple[np.ndarray, list[str]] | None:
    """(weights, classes) of the model's head, None without one."""
    head = getattr(model, ATTRIBUTE, None)
    if head is None:
        return None
    return head.weight.detach().float().cpu().numpy(), list(model.vlstress_head_classes)


def rows_for(model, classes: list[str]) -> np.ndarray | None:
    """The head's rows of `classes` in their order (float32), None when the model has no head or
    a class is not one of the head's."""
    found = of(model)
    if found is None:
        return None
    weights, names = found
    index = {name: i for i, name in enumerate(names)}
    if not all(name in index for name in classes):
        return None
    return weights[[index[name] for name in classes]].astype(np.float32)


def metadata(model) -> dict[str, str] | None:
    """The safetensors metadata naming the head's classes (None without a head)."""
    found = of(model)
    return None if found is None else {CLASSES_KEY: json.dumps(found[1])}


def classes_in(path: str | Path) -> list[str] | None:
    """The head's class names in a safetensors checkpoint, None when it carries no head (or is not
    a safetensors file: loading it says so). Reads the file's JSON header only, without torch, so
    a model card stays light."""
    import struct

    path = Path(path)
    if path.suffix != ".safetensors" or not path.is_file():
        return None
    with path.open("rb") as handle:
        size = handle.read(8)
        if len(size) < 8:
            return None
        (length,) = struct.unpack("<Q", size)  # the header's length: 8 bytes, little-endian
        if length > HEADER_LIMIT:
            return None
        try:
            header = json.loads(handle.read(length))
        except ValueError:
            return None
    if not isinstance(header, dict) or HEAD_KEY not in header:
        return None
    text = (header.get("__metadata__") or {}).get(CLASSES_KEY)
    if text is None:
        raise VlstressError(f"checkpoint {path}: a head ({HEAD_KEY}) without its class names")
    return list(json.loads(text))


def load(arch: str, path: str | Path, classes: list[str], device: str) -> tuple[Any, Any]:
    """(model, preprocess): `arch` with the towers of the checkpoint at `path` (strict) and its
    head attached."""
    import open_clip
    from safetensors.torch import load_file

    model, _, preprocess = open_clip.create_model_and_transforms(arch, device=device)
    state = load_file(str(path), device="cpu")
    weights = state.pop(HEAD_KEY)
    model.load_state_dict(state, strict=True)
    attach(model, weights.numpy(), classes)
    return model, preprocess
