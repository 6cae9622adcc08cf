"""Perturbed-image variants of a test set: partners, boxes, perturbations and the two modes.

Every test image i gets a partner p(i) != i from a seeded permutation of the test set,
and a perturbed image built by one of the PERTURBATIONS (registry: adding one is one
entry; an entry says whether it uses the partner and the box):

    mix    x' = lam * x + (1 - lam) * x_partner                  (pixel-wise blend)
    patch  CutMix: a box covering (1 - lam) of the image is copied from the partner
    flip   the image mirrored left-right (ignores lam, the partner and the box)

The plan (partners + boxes) depends only on (n_images, lam, seed), not on the image size:
boxes are stored as fractions of the image, so the same plan applies at 384x384
(faithful mode) and at the model's input size (clean mode). For a given seed, all
perturbations share partners.

Modes (see docs/image-variants.md):
  faithful  as the official RoCOCO release (mix_images.py): resize to 384x384 bicubic,
            mix in float32 [0, 1], quantise like torchvision.save_image, save JPEG
            (quality 75 = PIL's default used by save_image). Files on disk; any
            embedding step (`vlstress embed-retrieval`) reads them unchanged.
  clean     mix the model's own preprocessed tensors inside the embedding step
            (`vlstress embed-retrieval`): no 384 resize, no uint8 rounding, no JPEG.
            Lossless; blending commutes with the affine Normalize, so `mix` equals blending
            the resized/cropped RGB images
            (up to float rounding).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vlstress.errors import VlstressError

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

    @property
    def perturbation(self) -> Perturbation:
        return perturbation(self.method)

    def box(self, index: int) -> list[float] | None:
        """The image's box (fractions), None when the perturbation uses no box."""
        return [float(v) for v in self.boxes[index]] if self.perturbation.uses_box else None

    def partner(self, index: int) -> int | None:
        """The image's partner index, None when the perturbation uses no partner."""
        return int(self.partners[index]) if self.perturbation.uses_partner else None


def make_plan(n: int, method: str, lam: float, seed: int) -> VariantPlan:
    perturbation(method)
    partners = partner_indices(n, seed)
    rng = np.random.default_rng([seed, 1])  # boxes: an independent stream of the same seed
    return VariantPlan(
        method=method, lam=lam, seed=seed, partners=partners, boxes=box_fractions(n, lam, rng)
    )


# --- perturbations (registry: adding a method is one entry) -------------------------------------


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
    """CutMix: the image with the box region taken from the partner (channels first, ... x
    H x W)."""
    if box is None:
        raise ValueError("patch needs a box")
    height, width = image.shape[-2], image.shape[-1]
    y, x, box_h, box_w = pixel_box(box, height, width)
    out = image.clone() if hasattr(image, "clone") else image.copy()
    out[..., y : y + box_h, x : x + box_w] = partner[..., y : y + box_h, x : x + box_w]
    return out


def flip(image, partner=None, lam: float = 1.0, box=None):
    """The image mirrored left-right (channels first, ... x H x W); lam, partner and box are
    ignored."""
    return image.flip(-1) if hasattr(image, "flip") else np.flip(image, -1).copy()


@dataclass(frozen=True)
class Perturbation:
    """One image perturbation: `apply(image, partner, lam, box)` on channels-first
    tensors/arrays."""

    apply: Callable[..., Any]
    uses_partner: bool  # False: `partner` is None, and the manifest records no partner
    uses_box: bool  # False: `box` is None, and the manifest records no box
    description: str
    # works on [0, 1] images only, not on the clean mode's normalised tensors
    faithful_only: bool = False


PERTURBATIONS: dict[str, Perturbation] = {
    "mix": Perturbation(
        mix, uses_partner=True, uses_box=False, description="blend with the partner image"
    ),
    "patch": Perturbation(
        patch, uses_partner=True, uses_box=True, description="CutMix: a box of the partner image"
    ),
    "flip": Perturbation(
        flip,
        uses_partner=False,
        uses_box=False,
        description="the image mirrored left-right (lam ignored)",
    ),
}


def _corruptions() -> dict[str, Perturbation]:
    """Each ImageNet-C corruption at each severity (`fog_s3`): text-to-image retrieval against
    corrupted images, as the holistic CLIP paper does. lam, partner and box are ignored."""
    from vlstress.suites.corruptions.imagenet_c import (
        CORRUPTIONS,
        SEVERITIES,
        as_perturbation,
    )

    return {
        f"{name}_s{severity}": Perturbation(
            as_perturbation(name, severity),
            uses_partner=False,
            uses_box=False,
            description=f"{name} at severity {severity} (imagecorruptions-imaug; lam ignored)",
            faithful_only=True,
        )
        for name in CORRUPTIONS
        for severity in SEVERITIES
    }


PERTURBATIONS.update(_corruptions())


def perturbation(method: str) -> Perturbation:
    try:
        return PERTURBATIONS[method]
    except KeyError:
        raise VlstressError(
            f"unknown image variant method {method!r}; known: {', '.join(PERTURBATIONS)}"
        ) from None


def apply(plan: VariantPlan, index: int, image, partner):
    """The perturbed image `index` of the plan (`partner` is ignored when the perturbation uses
    none)."""
    entry = plan.perturbation
    return entry.apply(image, partner if entry.uses_partner else None, plan.lam, plan.box(index))


# --- faithful mode: files like the official release -----------------------------------------------


def faithful_tensor(path: str | Path, size: int = FAITHFUL_SIZE) -> np.ndarray:
    """Resize((size, size), bicubic) + ToTensor, as mix_images.py (torchvision on PIL = PIL
    resize): a float32 C x H x W array in [0, 1], the very values ToTensor gives (uint8 / 255
    in float32; a test checks them bit for bit against torchvision)."""
    from PIL import Image

    from vlstress.suites.corruptions.imagenet_c import load_rgb

    image = load_rgb(path).resize((size, size), Image.Resampling.BICUBIC)
    return np.asarray(image, dtype=np.float32).transpose(2, 0, 1) / np.float32(255)


def to_pil(image):
    """Quantise like torchvision.utils.save_image: x * 255 + 0.5, clamp, uint8 (float32 steps,
    as torch runs them; a C x H x W float32 array, or a tensor)."""
    from PIL import Image

    array = image.numpy() if hasattr(image, "numpy") else np.asarray(image)
    array = np.clip(array * np.float32(255) + np.float32(0.5), 0, 255).astype(np.uint8)
    return Image.fromarray(np.ascontiguousarray(array.transpose(1, 2, 0)))


def save_jpeg(image, path: Path, quality: int) -> None:
    """Deterministic JPEG: fixed quality, no EXIF/ICC, no timestamps."""
    image.save(path, format="JPEG", quality=quality)


def variant_file_names(entries: Sequence[dict[str, Any]]) -> list[str]:
    """`<stem>.jpg` per image (the official release keeps file names); clashes are an error."""
    names = [Path(e["image"]).stem + ".jpg" for e in entries]
    seen: dict[str, str] = {}
    for name, entry in zip(names, entries):
        if name in seen:
            raise VlstressError(
                f"images {seen[name]!r} and {entry['image']!r} would both be saved as {name}"
            )
        seen[name] = entry["image"]
    return names


def write_faithful(
    entries: Sequence[dict[str, Any]],
    plan: VariantPlan,
    out_dir: Path,
    *,
    size: int,
    quality: int,
    progress: bool = True,
) -> list[str]:
    """Write one mixed JPEG per entry into out_dir/images; returns the file names (entry order).

    Images are visited along the partner cycles, so every image is decoded and resized once.
    """
    from tqdm.auto import tqdm

    names = variant_file_names(entries)
    (out_dir / "images").mkdir(parents=True, exist_ok=True)
    n = len(entries)
    done = np.zeros(n, dtype=bool)
    bar = tqdm(
        total=n,
        desc=f"{plan.method} lam={plan.lam} seed={plan.seed}",
        unit="img",
        disable=not progress,
    )
    for start in range(n):
        if done[start]:
            continue
        first = current = faithful_tensor(entries[start]["path"], size)
        index = start
        while not done[index]:
            partner_index = int(plan.partners[index])
            partner = (
                first
                if partner_index == start
                else faithful_tensor(entries[partner_index]["path"], size)
            )
            save_jpeg(
                to_pil(apply(plan, index, current, partner)),
                out_dir / "images" / names[index],
                quality,
            )
            done[index] = True
            bar.update(1)
            index, current = partner_index, partner
    bar.close()
    return names


# --- clean mode: mixing inside the embedding step ----------------------------------------------


class CleanMixer:
    """`preprocess` for encoders.encode_images over item indices: the perturbed preprocessed tensor.

    Use with `load=lambda i: i`: encode_images calls preprocess(load(item)) per item.
    """

    def __init__(self, source_paths: Sequence[str], plan: VariantPlan, preprocess: Callable):
        self.source_paths = list(source_paths)
        self.plan = plan
        self.preprocess = preprocess

    def __call__(self, index: int):
        from vlstress.embedding.encoders import load_rgb

        image = self.preprocess(load_rgb(self.source_paths[index]))
        partner_index = self.plan.partner(index)
        partner = (
            None
            if partner_index is None
            else self.preprocess(load_rgb(self.source_paths[partner_index]))
        )
        return apply(self.plan, index, image, partner)


def plan_from_manifest(manifest: dict[str, Any]) -> VariantPlan:
    """Rebuild the plan recorded in a variant manifest (partners and boxes as written)."""
    try:
        variant = manifest["variant"]
        entries = manifest["images"]
        partners = np.array(
            [-1 if e["partner_index"] is None else int(e["partner_index"]) for e in entries],
            dtype=np.int64,
        )
        boxes = np.array(
            [e["box"] if e["box"] is not None else [0.0, 0.0, 0.0, 0.0] for e in entries],
            dtype=np.float64,
        )
        return VariantPlan(
            method=variant["method"],
            lam=float(variant["lam"]),
            seed=int(variant["seed"]),
            partners=partners,
            boxes=boxes,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise VlstressError(
            f"not an image-variant manifest (missing {exc}); run `vlstress image-variants`"
        ) from None


def load_variant(
    variant_dir: Path, images: Sequence[str], source_manifest: Path
) -> tuple[dict[str, Any], Path]:
    """(variant spec, manifest path) of a variant folder, checked to be built from the test set
    `images`."""
    from vlstress.caption_data.manifest import load_manifest

    path = Path(variant_dir) / "manifest.json"
    manifest = load_manifest(path)
    spec = manifest.get("variant")
    if not isinstance(spec, dict) or "method" not in spec:
        raise VlstressError(
            f"{path} is not an image-variant manifest; run `vlstress image-variants`"
        )
    if [e["image"] for e in manifest["images"]] != list(images):
        raise VlstressError(
            f"variant {variant_dir} was built from another test set than {source_manifest}; "
            "re-run `vlstress image-variants`"
        )
    return spec, path


def check_variant_embeddings(
    emb_path: Path, meta: dict[str, Any], spec: dict[str, Any], variant_dir: Path
) -> None:
    """Error unless the embeddings sidecar `meta` names the variant `spec`."""
    if (meta.get("variant") or {}).get("name") != spec.get("name"):
        raise VlstressError(
            f"{emb_path} embeds another variant than {variant_dir}; re-run "
            "`vlstress embed-retrieval`"
        )
