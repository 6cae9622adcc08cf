"""Batched, L2-normalised image and text embeddings with progress bars."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch
from PIL import Image, UnidentifiedImageError
from tqdm.auto import tqdm

from vlstress.errors import VlstressError

if TYPE_CHECKING:
    from open_clip.transformer import Transformer

log = logging.getLogger(__name__)


def load_rgb(path: str | Path) -> Image.Image:
    try:
        with Image.open(path) as img:
            return img.convert("RGB")
    except FileNotFoundError:
        raise VlstressError(f"image not found: {path}") from None
    except (UnidentifiedImageError, OSError) as exc:
        raise VlstressError(f"image is corrupt or unreadable: {path} ({exc})") from None


@dataclass(frozen=True)
class BorderCropped:
    """`load` of a test set whose protocol crops a border off every image before preprocessing
    (ObjectNet's thin red frame: `source.border_crop_px`, 2 pixels from each side as
    imagenet-testbed and wise-ft / CLIP_benchmark do, `img.crop((2, 2, w - 2, h - 2))`).
    Picklable, so decoding workers take it; nvJPEG runs hand such files to it (decoders.ForGpu)."""

    pixels: int

    def __call__(self, path: str | Path) -> Image.Image:
        image = load_rgb(path)
        width, height = image.size
        if width <= 2 * self.pixels or height <= 2 * self.pixels:
            raise VlstressError(
                f"image {path} is {width}x{height}: too small for the set's {self.pixels}-pixel "
                "border crop"
            )
        return image.crop((self.pixels, self.pixels, width - self.pixels, height - self.pixels))


def _normalise(features: torch.Tensor) -> np.ndarray:
    features = features.float()
    return torch.nn.functional.normalize(features, dim=-1).cpu().numpy().astype(np.float32)


@torch.no_grad()
def encode_images(
    model,
    preprocess: Callable,
    paths: Sequence,
    *,
    batch_size: int,
    device: str,
    load: Callable[[str | Path], Image.Image] | None = load_rgb,
    workers: int | None = 0,
    precision: str = "fp32",
    decoder: str = "pil",
    desc: str = "images",
) -> np.ndarray:
    """L2-normalised image embeddings (float32), rows in input order; a classifier's logits as
    they are (a model with `class_logits`, vlstress.embedding.timm_models).

    Each item is `preprocess(load(item))` (`load=None`: preprocess takes the item itself).
    `workers`: decoding processes (0 = this process, None = the job's spare cores; see
    vlstress.image_batches); the embeddings do not depend on it. `precision`: vlstress.precision.
    `decoder`: pil, or nvjpeg = JPEG files decoded on the GPU (vlstress.embedding.decoders).
    """
    from vlstress.embedding import decoders
    from vlstress.embedding.image_batches import image_batches

    forward = precision_context(precision, device)
    decoders.check(decoder, device)
    batches = image_batches(
        paths,
        preprocess,
        batch_size=batch_size,
        workers=workers,
        device=device,
        load=load,
        decoder=decoder,
        desc=desc,
    )
    chunks = []
    logits = getattr(model, "class_logits", False)
    for batch in tqdm(batches, total=math.ceil(len(paths) / batch_size), desc=desc, unit="batch"):
        with forward():
            features = model.encode_image(batch)
        chunks.append(features.float().cpu().numpy() if logits else _normalise(features))
    return np.concatenate(chunks, axis=0)


def precision_context(precision: str, device: str) -> Callable:
    """A factory of the context model forwards run in; checks `precision` on `device` now."""
    from vlstress.embedding import precision as precisions

    precisions.check(precision, device)
    return lambda: precisions.autocast(precision, device)


# --- text encoding ------------------------------------------------------------------------------
#
# Fast path ("trimmed"): open_clip's causal text towers run every caption through the full
# 77-token context although a caption is ~12-20 tokens. With a causal attention mask the
# hidden state at position p depends only on tokens 0..p, so running the tower on the first
# L columns (positional embedding and attention mask sliced to L x L) gives the same hidden
# states for positions < L. The text feature is read at one position per caption (the
# end-of-text token for `argmax`/`eos` pooling, position 0 for `first`), so choosing L as
# 1 + the largest pooled position of the batch gives exactly encode_text's output (up to
# float rounding, ~1e-6). Captions are de-duplicated and sorted by that length so each
# batch is trimmed to its own longest caption; rows are returned in input order.
# Towers where this is not exact (HF text towers, non-causal/bidirectional towers,
# CoCa's appended CLS token, `last`/`none` pooling, unknown classes) use plain
# encode_text on full batches; the reason is logged.

TRIM_POOL_TYPES = ("argmax", "eos", "first")
_WARNED: set[str] = set()  # fallback reasons already logged (EI encodes block by block)


@dataclass(frozen=True)
class TrimmableTextTower:
    """The pieces of an open_clip causal text tower needed to run it on trimmed tokens."""

    token_embedding: torch.nn.Module
    positional_embedding: torch.Tensor
    transformer: Transformer
    attn_mask: torch.Tensor
    ln_final: torch.nn.Module
    text_projection: torch.nn.Linear | torch.Tensor | None
    pool_type: str
    eos_id: int | None


def trimmable_text_tower(model) -> tuple[TrimmableTextTower | None, str]:
    """(tower, "") when trimming is exact for this model, else (None, reason)."""
    from open_clip.model import CLIP, CustomTextCLIP
    from open_clip.transformer import TextTransformer

    if type(model).encode_text is CLIP.encode_text:
        parts = model
        pool_type = getattr(model, "text_pool_type", "argmax")
        eos_id = getattr(model, "text_eos_id", None)
    elif type(model).encode_text is CustomTextCLIP.encode_text:
        text = model.text
        if type(text).forward is not TextTransformer.forward:
            return (
                None,
                f"text tower {type(text).__name__} is not open_clip's causal TextTransformer",
            )
        if text.cls_emb is not None:
            return None, "text tower appends a CLS token (CoCa): its output sees the full context"
        if getattr(text, "use_pad_mask", False):
            return None, "text tower uses a padding mask"
        parts, pool_type, eos_id = text, text.pool_type, getattr(text, "eos_id", None)
    else:
        return (
            None,
            f"{type(model).__name__}.encode_text is not open_clip's CLIP/CustomTextCLIP text path",
        )
    if getattr(parts, "attn_mask", None) is None:
        return (
            None,
            "text tower is bidirectional (no causal mask): trailing padding changes its output",
        )
    if pool_type not in TRIM_POOL_TYPES:
        return (
            None,
            f"text pooling {pool_type!r} reads a position that depends on the context length",
        )
    if pool_type == "eos" and eos_id is None:
        return None, "eos pooling without an eos id"
    return (
        TrimmableTextTower(
            token_embedding=parts.token_embedding,
            positional_embedding=parts.positional_embedding,
            transformer=parts.transformer,
            attn_mask=parts.attn_mask,
            ln_final=parts.ln_final,
            text_projection=parts.text_projection,
            pool_type=pool_type,
            eos_id=eos_id,
        ),
        "",
    )


def pooled_positions(
    tokens: torch.Tensor, pool_type: str, eos_id: int | None = None
) -> torch.Tensor:
    """The position each row's text feature is read from (as open_clip's text_global_pool)."""
    if pool_type == "argmax":
        return tokens.argmax(dim=-1)
    if pool_type == "eos":
        if eos_id is None:
            raise ValueError("eos pooling without an eos id")
        return (tokens == eos_id).int().argmax(dim=-1)
    if pool_type == "first":
        return torch.zeros(tokens.shape[0], dtype=torch.long, device=tokens.device)
    raise ValueError(f"pooling {pool_type!r} cannot be trimmed")


def encode_text_trimmed(tower: TrimmableTextTower, tokens: torch.Tensor) -> torch.Tensor:
    """encode_text (unnormalised) on tokens whose trailing columns were cut off after the pooled
    position."""
    from open_clip.transformer import text_global_pool

    length = tokens.shape[1]
    cast_dtype = tower.transformer.get_cast_dtype()
    x = tower.token_embedding(tokens).to(cast_dtype)
    x = x + tower.positional_embedding[:length].to(cast_dtype)
    x = tower.transformer(x, attn_mask=tower.attn_mask[:length, :length])
    x = tower.ln_final(x)
    x = text_global_pool(x, tokens, tower.pool_type, eos_token_id=tower.eos_id)
    if tower.text_projection is not None:
        if isinstance(tower.text_projection, torch.nn.Linear):
            x = tower.text_projection(x)
        else:
            x = x @ tower.text_projection
    return x


@torch.no_grad()
def encode_texts_raw(
    model,
    tokenizer,
    captions: Sequence[str],
    *,
    batch_size: int,
    device: str,
    trim: bool = True,
    precision: str = "fp32",
    desc: str = "captions",
    progress: bool = True,
) -> np.ndarray:
    """Unnormalised text features (float32, one row per caption, input order).

    trim=True: de-duplicate, sort by token length, trim each batch's context (exact for
    causal open_clip towers; other towers fall back to plain encode_text, logged).
    trim=False: plain `model.encode_text` on consecutive full-context batches.
    precision: fp32 or amp (vlstress.precision); the features are float32 either way.
    """
    if len(captions) == 0:
        raise ValueError("no captions to encode")
    forward = precision_context(precision, device)
    tower, reason = trimmable_text_tower(model) if trim else (None, "trimming disabled")
    if tower is None:
        if trim and reason not in _WARNED:
            _WARNED.add(reason)
            log.warning(
                "text encoding: exact context trimming not possible (%s); using plain encode_text",
                reason,
            )
        chunks = []
        for start in tqdm(
            range(0, len(captions), batch_size), desc=desc, unit="batch", disable=not progress
        ):
            tokens = tokenizer(list(captions[start : start + batch_size])).to(device)
            with forward():
                features = model.encode_text(tokens)
            chunks.append(features.float().cpu())
        return torch.cat(chunks).numpy().astype(np.float32)

    unique: dict[str, int] = {}
    inverse = np.fromiter(
        (unique.setdefault(c, len(unique)) for c in captions), dtype=np.int64, count=len(captions)
    )
    texts = list(unique)
    tokens = torch.cat([tokenizer(texts[i : i + 4096]) for i in range(0, len(texts), 4096)])
    lengths = pooled_positions(tokens, tower.pool_type, tower.eos_id) + 1
    order = torch.argsort(lengths, stable=True)
    out = torch.empty((len(texts), _feature_dim(tower)), dtype=torch.float32)
    for start in tqdm(
        range(0, len(texts), batch_size), desc=desc, unit="batch", disable=not progress
    ):
        idx = order[start : start + batch_size]
        width = int(lengths[idx].max())
        batch = tokens[idx, :width].to(device)
        with forward():
            features = encode_text_trimmed(tower, batch)
        out[idx] = features.float().cpu()
    log.debug("text encoding: %d captions, %d unique, trimmed context", len(captions), len(texts))
    return out[torch.from_numpy(inverse)].numpy()


def _feature_dim(tower: TrimmableTextTower) -> int:
    proj = tower.text_projection
    if proj is None:
        return int(tower.positional_embedding.shape[-1])
    if isinstance(proj, torch.nn.Linear):
        return int(proj.out_features)
    return int(proj.shape[-1])


def encode_texts(
    model,
    tokenizer,
    captions: Sequence[str],
    *,
    batch_size: int,
    device: str,
    desc: str = "captions",
    trim: bool = True,
    precision: str = "fp32",
    progress: bool = True,
) -> np.ndarray:
    """L2-normalised caption embeddings (float32), rows in input order; trimmed fast path by
    default."""
    raw = encode_texts_raw(
        model,
        tokenizer,
        captions,
        batch_size=batch_size,
        device=device,
        trim=trim,
        precision=precision,
        desc=desc,
        progress=progress,
    )
    return _normalise(torch.from_numpy(raw))
