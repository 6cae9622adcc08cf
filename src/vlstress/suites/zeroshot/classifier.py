"""The zero-shot classifier of a model: one unit vector per class, the mean of the normalised
text embeddings of the class name in every template (what open_clip's `build_zero_shot_classifier`
and CLIP_benchmark's `zero_shot_classifier` compute).

The prompts go through the trimmed text encoder (`vlstress.embedding.encoders.encode_texts`):
de-duplicated, sorted by token length and each batch cut to its longest prompt, instead of the
77-token context in class order. A prompt is ~10 tokens, so this is ~6x less text work, with the
same embeddings up to float rounding (causal open_clip towers; other towers fall back to plain
encode_text, logged). The prompts suite keeps the same rows per template (`prompt_rows`).

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

# prompts per forward of the text pass: sorted by length, a batch holds prompts of about one length,
# so a large one costs no padding (256 measured ~15% faster than 32 on 2 CPU threads)
PROMPT_BATCH = 256


def prompt_rows(
    model,
    tokenizer,
    classnames: list[str],
    templates: list[str],
    *,
    device: str,
    precision: str = "fp32",
    batch_size: int = PROMPT_BATCH,
) -> np.ndarray:
    """(classes x templates x dim) float32: the L2-normalised text embedding of every prompt
    (class name in template), through the trimmed text encoder; precision: fp32 or amp
    (vlstress.precision)."""
    from vlstress.embedding.encoders import encode_texts
    from vlstress.suites.zeroshot.templates import prompts

    texts = [text for name in classnames for text in prompts(templates, name)]
    rows = encode_texts(
        model,
        tokenizer,
        texts,
        batch_size=batch_size,
        device=device,
        precision=precision,
        desc="prompts",
    )
    return rows.reshape(len(classnames), len(templates), -1)


def mean_of_rows(rows: np.ndarray) -> np.ndarray:
    """The normalised mean of (classes x templates x dim) unit rows over the templates, classes x
    dim, in float64."""
    mean = np.asarray(rows, dtype=np.float64).mean(axis=1)
    return mean / np.linalg.norm(mean, axis=1, keepdims=True)


def build(
    model,
    tokenizer,
    classnames: list[str],
    templates: list[str],
    *,
    device: str,
    precision: str = "fp32",
    batch_size: int = PROMPT_BATCH,
) -> np.ndarray:
    """(classes x dim) float32 weights, rows L2-normalised: the normalised mean of `prompt_rows`
    over the templates."""
    rows = prompt_rows(
        model,
        tokenizer,
        classnames,
        templates,
        device=device,
        precision=precision,
        batch_size=batch_size,
    )
    return mean_of_rows(rows).astype(np.float32)


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
