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

A supervised ImageNet classifier (a timm model) has no text tower: its "classifier" of a test set
is the class map of `vlstress.testsets.imagenet_map` (classes x 1000, each row averaging the
probabilities of the class's ImageNet classes), its sidecar says `scores: imagenet-probabilities`
with logit scale 1, and `scores` turns its image "embeddings" (the 1000 logits) into class logits
whose softmax is each class's mean probability. Every suite scores through `scores`, so both kinds
take part.
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


CLASS_MAP = "imagenet-probabilities"  # sidecar `scores` of a timm model's class map
MAX_LOGIT = "max-logit"  # sidecar `class_map_rule` of the video sets (imagenet_map.MAX_LOGIT)


def class_map(testset, imagenet_map: str | None, classes: list[str] | None = None) -> np.ndarray:
    """A timm model's classifier of a test set: its classes (or `classes`, the 1000 ImageNet ones)
    as ImageNet-1k classes, from the map given for the set (a file, `demo`) or its own ids."""
    from vlstress.testsets import imagenet_map as maps
    from vlstress.testsets.labelmaps import imagenet_classnames

    if classes is not None and list(classes) == list(imagenet_classnames()):
        return maps.class_map_matrix([[i] for i in range(len(classes))])
    given = maps.read_map(imagenet_map) if imagenet_map else None
    return maps.class_map_matrix(maps.imagenet_classes(testset, given))


def class_map_rule(testset, imagenet_map: str | None, classes: list[str] | None = None) -> str:
    """How `class_map`'s classes are scored from the 1000 logits (sidecar `class_map_rule`):
    `max-logit` for the video sets (imagenet-testbed's), `identity`, or `mean-prob`
    (vlstress.testsets.imagenet_map.class_map_rule)."""
    from vlstress.testsets import imagenet_map as maps
    from vlstress.testsets.labelmaps import imagenet_classnames

    if classes is not None and list(classes) == list(imagenet_classnames()):
        return maps.IDENTITY
    given = maps.read_map(imagenet_map) if imagenet_map else None
    return maps.class_map_rule(testset.kind, maps.imagenet_classes(testset, given))


def scores(embeddings: np.ndarray, weights: np.ndarray, meta: dict[str, Any]) -> np.ndarray:
    """Class scores of image embeddings: the cosines (in the inputs' dtype) for an image-text model;
    for a class map (float64), log(sum_j W[c, j] exp(logit_j)): its softmax over the classes is the
    mean probability of each class's ImageNet classes, and a class of one ImageNet class scores
    that class's logit (so max-logit and energy OOD scores keep their meaning). With sidecar
    `class_map_rule: max-logit` (the video sets, as imagenet-testbed scores them) a class scores the
    largest logit of its ImageNet classes instead; a class without any scores -inf."""
    if meta.get("scores") != CLASS_MAP:
        from threadpoolctl import threadpool_limits

        # one BLAS thread: the same sums in the same order whichever front end runs the step, with
        # however many threads it grants (per-item scores are kept to the last bit)
        with threadpool_limits(limits=1, user_api="blas"):
            return embeddings @ weights.T
    from scipy.special import logsumexp

    index, log_weight = _members(np.asarray(weights))
    logits = np.asarray(embeddings, dtype=np.float64)
    if meta.get("class_map_rule") == MAX_LOGIT:
        return np.max(logits[:, index] + np.where(np.isinf(log_weight), -np.inf, 0.0), axis=2)
    # exact for every class, however far below the top logit: no exp of a whole row
    return logsumexp(logits[:, index] + log_weight, axis=2)


def torch_scores(features, weights, meta: dict[str, Any]):
    """`scores` in torch, differentiable (the attacks): features are the image tower's output."""
    import torch

    if meta.get("scores") != CLASS_MAP:
        return torch.nn.functional.normalize(features.float(), dim=-1) @ weights.T
    index, log_weight = _members(weights.detach().cpu().numpy())
    gathered = features.float()[:, torch.as_tensor(index, device=features.device)]
    if meta.get("class_map_rule") == MAX_LOGIT:
        mask = np.where(np.isinf(log_weight), -np.inf, 0.0)
        return (gathered + torch.as_tensor(mask, device=features.device)).amax(dim=2)
    return torch.logsumexp(gathered + torch.as_tensor(log_weight, device=features.device), dim=2)


def _members(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A class map's rows as (classes x k) ImageNet indices and the log of their weights, padded to
    the largest class with weight 0 (log -inf): the gather `logits[:, index]` is then
    (images x classes x k), small however many images."""
    rows = [np.flatnonzero(row) for row in weights]
    width = max((len(row) for row in rows), default=1) or 1
    index = np.zeros((len(rows), width), dtype=np.int64)
    log_weight = np.full((len(rows), width), -np.inf)
    for c, members in enumerate(rows):
        index[c, : len(members)] = members
        log_weight[c, : len(members)] = np.log(weights[c, members].astype(np.float64))
    return index, log_weight


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
