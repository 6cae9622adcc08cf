"""Batched, L2-normalised image and text embeddings with progress bars."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import torch
from PIL import Image, UnidentifiedImageError
from tqdm.auto import tqdm

from .errors import VlstressError


def load_rgb(path: str | Path) -> Image.Image:
    try:
        with Image.open(path) as img:
            return img.convert("RGB")
    except FileNotFoundError:
        raise VlstressError(f"image not found: {path}") from None
    except (UnidentifiedImageError, OSError) as exc:
        raise VlstressError(f"image is corrupt or unreadable: {path} ({exc})") from None


def _normalise(features: torch.Tensor) -> np.ndarray:
    features = features.float()
    return torch.nn.functional.normalize(features, dim=-1).cpu().numpy().astype(np.float32)


@torch.no_grad()
def encode_images(
    model,
    preprocess: Callable,
    paths: Sequence[str | Path],
    *,
    batch_size: int,
    device: str,
    load: Callable[[str | Path], Image.Image] = load_rgb,
    desc: str = "images",
) -> np.ndarray:
    chunks = []
    for start in tqdm(range(0, len(paths), batch_size), desc=desc, unit="batch"):
        batch = torch.stack([preprocess(load(p)) for p in paths[start : start + batch_size]]).to(device)
        chunks.append(_normalise(model.encode_image(batch)))
    return np.concatenate(chunks, axis=0)


@torch.no_grad()
def encode_texts(model, tokenizer, captions: Sequence[str], *, batch_size: int, device: str, desc: str = "captions") -> np.ndarray:
    chunks = []
    for start in tqdm(range(0, len(captions), batch_size), desc=desc, unit="batch"):
        tokens = tokenizer(list(captions[start : start + batch_size])).to(device)
        chunks.append(_normalise(model.encode_text(tokens)))
    return np.concatenate(chunks, axis=0)
