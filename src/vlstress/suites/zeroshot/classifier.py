"""The zero-shot classifier of a model: one unit vector per class, the mean of the normalised
text embeddings of the class name in every template (open_clip's `build_zero_shot_classifier`).

Stored as `<name>.npy` (classes x dim, float32) + sidecar `<name>.npy.json` holding the class
names and templates it was built from, so evaluation checks it matches the test set, and the
model's learned logit scale (zero-shot logits = logit_scale * cosine: calibration and OOD
scores need it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from vlstress.embedding.files import model_block
from vlstress.errors import VlstressError
from vlstress.io import read_json, sidecar


def build(
    model,
    tokenizer,
    classnames: list[str],
    templates: list[str],
    *,
    device: str,
    precision: str = "fp32",
    classes_per_batch: int = 10,
) -> np.ndarray:
    """(classes x dim) float32 weights, rows L2-normalised; precision: fp32 or amp
    (vlstress.precision)."""
    import torch
    from open_clip import build_zero_shot_classifier

    from vlstress.embedding.precision import autocast

    with autocast(precision, device):
        weights = build_zero_shot_classifier(
            model,
            tokenizer,
            classnames,
            # open_clip formats strings positionally; `{c}` is a named placeholder, so pass
            # callables
            [
                lambda name, template=template: template.replace("{c}", name)
                for template in templates
            ],
            num_classes_per_batch=classes_per_batch,
            device=device,
            use_tqdm=True,
        )
    with torch.no_grad():
        return weights.T.float().cpu().numpy().astype(np.float32)


def load(path: Path, classes: list[str]) -> tuple[np.ndarray, dict[str, Any]]:
    """(weights, sidecar) of a classifier built for exactly `classes` (in order)."""
    path = Path(path)
    if not path.is_file():
        raise VlstressError(
            f"zero-shot classifier not found: {path}; run "
            "`vlstress embed-zeroshot --sets classifiers`"
        )
    meta = read_json(sidecar(path), "zero-shot classifier sidecar")
    if meta.get("classes") != list(classes):
        raise VlstressError(
            f"zero-shot classifier {path} was built for other class names than the test set; "
            "rebuild it"
        )
    weights = np.load(path, allow_pickle=False)
    if weights.shape[0] != len(classes):
        raise VlstressError(
            f"zero-shot classifier {path}: {weights.shape[0]} rows for {len(classes)} classes"
        )
    model_block(path, meta)
    return weights, meta


def model_logit_scale(model) -> dict[str, float]:
    """The model's zero-shot logit scale exp(logit_scale) (and SigLIP's logit bias, when it has
    one)."""
    import torch

    with torch.no_grad():
        out = {"logit_scale": float(model.logit_scale.exp().item())}
        bias = getattr(model, "logit_bias", None)
        if bias is not None:
            out["logit_bias"] = float(bias.item())
    return out


def logit_scale(path: Path, meta: dict[str, Any]) -> float:
    """The logit scale recorded in a classifier's sidecar."""
    value = meta.get("logit_scale")
    if not isinstance(value, (int, float)) or not value > 0:
        raise VlstressError(
            f"zero-shot classifier {path}: its sidecar records no logit scale; rebuild it with "
            "`vlstress embed-zeroshot --sets classifiers`"
        )
    return float(value)
