"""Mixed-image variants of a test set: partners, boxes, mixers and the two modes.

Every test image i gets a partner p(i) != i from a seeded permutation of the test set,
and a mixed image built by one of the MIXERS:

    mix    x' = lam * x + (1 - lam) * x_partner                  (pixel-wise blend)
    patch  CutMix: a box covering (1 - lam) of the image is copied from the partner

The plan (partners + boxes) depends only on (n_images, lam, seed), not on the image size:
boxes are stored as fractions of the image, so the same plan applies at 384x384
(faithful mode) and at the model's input size (clean mode). For a given seed, `mix` and
`patch` share partners.

Modes (see docs/image-variants.md):
  faithful  as the official RoCOCO release (mix_images.py): resize to 384x384 bicubic,
            mix in float32 [0, 1], quantise like torchvision.save_image, save JPEG
            (quality 75 = PIL's default used by save_image). Files on disk; any
            embedding step (`vlstress embed-images`) reads them unchanged.
  clean     mix the model's own preprocessed tensors inside the embedding step
            (`vlstress embed-image-variant`): no 384 resize, no uint8 rounding, no JPEG.
            Lossless; blending commutes with the affine Normalize, so `mix` equals blending
            the resized/cropped RGB images
            (up to float rounding).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import VlstressError

MODES = ("faithful", "clean")
FAITHFUL_SIZE = 384  # the official release resizes every image to 384x384 (bicubic)
FAITHFUL_JPEG_QUALITY = 75  # torchvision.save_image -> PIL's default JPEG quality


# --- names --------------------------------------------------------------------------------------


def parse_lam(text: str) -> float:
    """`--lam` text -> float in [0, 1] (the text itself is kept for names)."""
    try:
        lam = float(text)
    except ValueError:
        raise VlstressError(f"lam must be a number in [0, 1], got {text!r}") from None
    if not (0.0 <= lam <= 1.0) or math.isnan(lam):
        raise VlstressError(f"lam must be in [0, 1], got {text!r}")
    return lam


def variant_name(method: str, lam: str | float, seed: int) -> str:
    """Folder name of a variant: `mix_lam0.9_seed1` (lam as written in params.yaml)."""
    return f"{method}_lam{lam}_seed{seed}"


def evaluation_name(method: str, lam: str | float, seed: int) -> str:
    """Evaluation name in metric records: `image-mix-lam0.9-seed1`."""
    return f"image-{method}-lam{lam}-seed{seed}"


# --- plan ---------------------------------------------------------------------------------------


def partner_indices(n: int, seed: int) -> np.ndarray:
    """partner[i] != i for every i: a seeded random cyclic permutation (one n-cycle).

    A seeded shuffle `order` of the test set; each image's partner is the next image in
    that order (the last one's partner is the first). Never itself for n >= 2.
    """
    if n < 2:
        raise VlstressError(f"image variants need at least 2 images to pick partners, got {n}")
    order = np.random.default_rng(seed).permutation(n)
    partners = np.empty(n, dtype=np.int64)
    partners[order] = np.roll(order, -1)
    return partners


def box_fractions(n: int, lam: float, rng: np.random.Generator) -> np.ndarray:
    """(n, 4) boxes [top, left, height, width] as fractions of the image; area = 1 - lam.

    A square box of side sqrt(1 - lam), placed uniformly so that it lies fully inside the
    image (so it covers 1 - lam of it, up to pixel rounding).
    """
    side = math.sqrt(1.0 - lam)
    corners = rng.random((n, 2)) * (1.0 - side)
    return np.column_stack([corners, np.full((n, 2), side)])


@dataclass(frozen=True)
class VariantPlan:
    method: str
    lam: float
    seed: int
    partners: np.ndarray  # (n,) int64
    boxes: np.ndarray  # (n, 4) float64 fractions [top, left, height, width]

    def box(self, index: int) -> list[float] | None:
        return [float(v) for v in self.boxes[index]] if self.method == "patch" else None


def make_plan(n: int, method: str, lam: float, seed: int) -> VariantPlan:
    if method not in MIXERS:
        raise VlstressError(f"unknown image variant method {method!r}; known: {', '.join(MIXERS)}")
    partners = partner_indices(n, seed)
    rng = np.random.default_rng([seed, 1])  # boxes: an independent stream of the same seed
    return VariantPlan(method=method, lam=lam, seed=seed, partners=partners, boxes=box_fractions(n, lam, rng))


# --- mixers (registry: adding a method is one entry) -------------------------------------------


def pixel_box(box: Sequence[float], height: int, width: int) -> tuple[int, int, int, int]:
    """Fractional [top, left, h, w] -> integer (y, x, h, w) inside a height x width image."""
    top, left, frac_h, frac_w = box
    box_h = min(height, int(round(frac_h * height)))
    box_w = min(width, int(round(frac_w * width)))
    y = min(int(round(top * height)), height - box_h)
    x = min(int(round(left * width)), width - box_w)
    return y, x, box_h, box_w


def mix(image, partner, lam: float, box=None):
    """lam * x + (1 - lam) * x_partner (float tensors/arrays of the same shape)."""
    return lam * image + (1 - lam) * partner


def patch(image, partner, lam: float, box=None):
    """CutMix: the image with the box region taken from the partner (channels first, ... x H x W)."""
    if box is None:
        raise ValueError("patch needs a box")
    height, width = image.shape[-2], image.shape[-1]
    y, x, box_h, box_w = pixel_box(box, height, width)
    out = image.clone() if hasattr(image, "clone") else image.copy()
    out[..., y : y + box_h, x : x + box_w] = partner[..., y : y + box_h, x : x + box_w]
    return out


MIXERS: dict[str, Callable[..., Any]] = {"mix": mix, "patch": patch}


def apply(plan: VariantPlan, index: int, image, partner):
    return MIXERS[plan.method](image, partner, plan.lam, plan.box(index))


# --- faithful mode: files like the official release -----------------------------------------------


def faithful_tensor(path: str | Path, size: int = FAITHFUL_SIZE):
    """Resize((size, size), bicubic) + ToTensor, as mix_images.py (torchvision on PIL = PIL resize)."""
    import torch
    from PIL import Image

    from ..encoders import load_rgb

    image = load_rgb(path).resize((size, size), Image.BICUBIC)
    return torch.from_numpy(np.asarray(image).copy()).permute(2, 0, 1).float().div(255)


def to_pil(tensor):
    """Quantise like torchvision.utils.save_image: x * 255 + 0.5, clamp, uint8."""
    import torch
    from PIL import Image

    array = tensor.mul(255).add_(0.5).clamp_(0, 255).permute(1, 2, 0).to(torch.uint8).numpy()
    return Image.fromarray(array)


def save_jpeg(image, path: Path, quality: int) -> None:
    """Deterministic JPEG: fixed quality, no EXIF/ICC, no timestamps."""
    image.save(path, format="JPEG", quality=quality)


def variant_file_names(entries: Sequence[dict[str, Any]]) -> list[str]:
    """`<stem>.jpg` per image (the official release keeps file names); clashes are an error."""
    names = [Path(e["image"]).stem + ".jpg" for e in entries]
    seen: dict[str, str] = {}
    for name, entry in zip(names, entries):
        if name in seen:
            raise VlstressError(f"images {seen[name]!r} and {entry['image']!r} would both be saved as {name}")
        seen[name] = entry["image"]
    return names


def write_faithful(
    entries: Sequence[dict[str, Any]], plan: VariantPlan, out_dir: Path, *, size: int, quality: int, progress: bool = True
) -> list[str]:
    """Write one mixed JPEG per entry into out_dir/images; returns the file names (entry order).

    Images are visited along the partner cycles, so every image is decoded and resized once.
    """
    from tqdm.auto import tqdm

    names = variant_file_names(entries)
    (out_dir / "images").mkdir(parents=True, exist_ok=True)
    n = len(entries)
    done = np.zeros(n, dtype=bool)
    bar = tqdm(total=n, desc=f"{plan.method} lam={plan.lam} seed={plan.seed}", unit="img", disable=not progress)
    for start in range(n):
        if done[start]:
            continue
        first = current = faithful_tensor(entries[start]["path"], size)
        index = start
        while not done[index]:
            partner_index = int(plan.partners[index])
            partner = first if partner_index == start else faithful_tensor(entries[partner_index]["path"], size)
            save_jpeg(to_pil(apply(plan, index, current, partner)), out_dir / "images" / names[index], quality)
            done[index] = True
            bar.update(1)
            index, current = partner_index, partner
    bar.close()
    return names


# --- clean mode: mixing inside the embedding step ----------------------------------------------


class CleanMixer:
    """`preprocess` for encoders.encode_images over item indices: the mixed preprocessed tensor.

    Use with `load=lambda i: i`: encode_images calls preprocess(load(item)) per item.
    """

    def __init__(self, source_paths: Sequence[str], plan: VariantPlan, preprocess: Callable):
        self.source_paths = list(source_paths)
        self.plan = plan
        self.preprocess = preprocess

    def __call__(self, index: int):
        from ..encoders import load_rgb

        image = self.preprocess(load_rgb(self.source_paths[index]))
        partner = self.preprocess(load_rgb(self.source_paths[int(self.plan.partners[index])]))
        return apply(self.plan, index, image, partner)


def plan_from_manifest(manifest: dict[str, Any]) -> VariantPlan:
    """Rebuild the plan recorded in a variant manifest (partners and boxes as written)."""
    try:
        variant = manifest["variant"]
        entries = manifest["images"]
        partners = np.array([int(e["partner_index"]) for e in entries], dtype=np.int64)
        boxes = np.array([e["box"] if e["box"] is not None else [0.0, 0.0, 0.0, 0.0] for e in entries], dtype=np.float64)
        return VariantPlan(method=variant["method"], lam=float(variant["lam"]), seed=int(variant["seed"]), partners=partners, boxes=boxes)
    except (KeyError, TypeError, ValueError) as exc:
        raise VlstressError(f"not an image-variant manifest (missing {exc}); run `vlstress image-variants`") from None
