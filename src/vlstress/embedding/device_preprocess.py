"""open_clip's image preprocessing with the resize on the GPU, bit for bit what Pillow computes.

On a GPU node the CPU work per image caps the image rate: decoding a COCO JPEG costs
~2-3 ms, Pillow's antialiased bicubic resize ~3-5 ms more (docs/throughput.md). Here the
workers only decode, and the resize runs on the GPU without changing a bit:

- Pillow resamples 8-bit images in fixed point (PRECISION_BITS = 22): coefficients are
  computed in double precision and rounded to integers, each pass (horizontal, then
  vertical) sums integer products, rounds and clips to uint8. `pil_coefficients` is that
  computation line by line (Python floats are C doubles; `int()` truncates like C casts),
  from Pillow's libImaging/Resample.c.
- The two passes run as float64 matrix products, which are exact: every product and partial
  sum is an integer below 2**53, so no summation order can round.
- Crop, ToTensor (/255) and Normalize are the float32 operations torchvision runs on the
  CPU. Divisions use a device tensor as divisor: with a Python number, CUDA multiplies by
  the reciprocal instead, which can differ in the last bit.

Only open_clip's own layout is split (Resize(bicubic|bilinear) -> CenterCrop -> MaybeConvertMode
-> ToTensor -> Normalize, every open_clip model's default); any other preprocess keeps the
CPU path whole (`split` says why). Tests check every step against Pillow and torchvision.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import lru_cache

import numpy as np
import PIL
import torch
from PIL import Image

PRECISION_BITS = 32 - 8 - 2  # Pillow's fixed point for 8-bit images
log = logging.getLogger(__name__)


def _bicubic(x: float) -> float:
    a = -0.5
    if x < 0.0:
        x = -x
    if x < 1.0:
        return ((a + 2.0) * x - (a + 3.0)) * x * x + 1
    if x < 2.0:
        return (((x - 5) * x + 8) * x - 4) * a
    return 0.0


def _bilinear(x: float) -> float:
    if x < 0.0:
        x = -x
    if x < 1.0:
        return 1.0 - x
    return 0.0


FILTERS: dict[int, tuple[Callable[[float], float], float]] = {
    Image.Resampling.BICUBIC: (_bicubic, 2.0),
    Image.Resampling.BILINEAR: (_bilinear, 1.0),
}


@lru_cache(maxsize=256)
def pil_coefficients(in_size: int, out_size: int, resample: int) -> np.ndarray:
    """Pillow's integer coefficients as a dense (out_size, in_size) matrix (precompute_coeffs +
    normalize_coeffs_8bpc, box = the whole image)."""
    filter_fn, filter_support = FILTERS[resample]
    scale = filterscale = in_size / out_size
    if filterscale < 1.0:
        filterscale = 1.0
    support = filter_support * filterscale
    ss = 1.0 / filterscale
    one = 1 << PRECISION_BITS
    out = np.zeros((out_size, in_size), dtype=np.int64)
    for xx in range(out_size):
        center = (xx + 0.5) * scale
        xmin = max(int(center - support + 0.5), 0)
        xmax = min(int(center + support + 0.5), in_size) - xmin
        weights = [filter_fn((x + xmin - center + 0.5) * ss) for x in range(xmax)]
        ww = 0.0
        for w in weights:
            ww += w
        for x, w in enumerate(weights):
            k = w / ww if ww != 0.0 else w
            out[xx, xmin + x] = int(-0.5 + k * one) if k < 0 else int(0.5 + k * one)
    return out


def _pass(pixels: torch.Tensor, coefficients: torch.Tensor) -> torch.Tensor:
    """One fixed-point pass along the last axis: (..., in) float64 integers -> (..., out)."""
    summed = pixels @ coefficients.T + float(1 << (PRECISION_BITS - 1))
    return torch.floor(summed / float(1 << PRECISION_BITS)).clamp_(0, 255)


def pass_order(in_size: tuple[int, int], out_size: tuple[int, int], resample: int) -> bool | None:
    """Whether the installed Pillow runs the vertical pass first for this resize (None: neither
    order gives Pillow's bytes). The passes round in between, so the order matters, and Pillow's
    choice changed between versions (13.0: vertical first when the height shrinks by more than twice
    what the width does); so it is read off Pillow itself, on a random image of this shape."""
    return _pass_order(tuple(in_size), tuple(out_size), int(resample))


@lru_cache(maxsize=1024)
def _pass_order(in_size: tuple[int, int], out_size: tuple[int, int], resample: int) -> bool | None:
    probe = np.random.default_rng(0).integers(0, 256, (*in_size, 3), dtype=np.uint8)
    expected = np.asarray(Image.fromarray(probe).resize(out_size[::-1], resample))
    batch = torch.from_numpy(probe).permute(2, 0, 1)[None]
    for vertical_first in (False, True):
        ours = (
            pil_resize(batch, out_size, resample, vertical_first)[0]
            .permute(1, 2, 0)
            .numpy()
            .astype(np.uint8)
        )
        if np.array_equal(ours, expected):
            return vertical_first
    return None


def pil_resize(
    images: torch.Tensor, size: tuple[int, int], resample: int, vertical_first: bool
) -> torch.Tensor:
    """Image.resize((width, height), resample) of uint8 (N, C, H, W) images, as float64 integers."""
    height, width = size
    pixels = images.to(torch.float64)
    in_h, in_w = images.shape[-2:]

    def coeffs(n_in: int, n_out: int) -> torch.Tensor:
        return torch.from_numpy(pil_coefficients(n_in, n_out, resample)).to(
            images.device, torch.float64
        )

    def horizontal(x: torch.Tensor) -> torch.Tensor:
        return _pass(x, coeffs(in_w, width))

    def vertical(x: torch.Tensor) -> torch.Tensor:
        return _pass(x.transpose(-1, -2), coeffs(in_h, height)).transpose(-1, -2)

    # Pillow skips a pass whose size does not change
    passes = [
        (vertical, in_h != height),
        (horizontal, in_w != width),
    ]
    if not vertical_first:
        passes.reverse()
    for run, needed in passes:
        if needed:
            pixels = run(pixels)
    return pixels


class DevicePreprocess:
    """The GPU half of a split open_clip preprocess: uint8 images in, the model's input batch
    out."""

    def __init__(self, resize, crop, normalize):
        from torchvision.transforms import InterpolationMode
        from torchvision.transforms.functional import pil_modes_mapping

        self.size = resize.size
        self.max_size = resize.max_size
        self.resample = pil_modes_mapping[InterpolationMode(resize.interpolation)]
        self.crop = tuple(crop.size)
        self.normalize = normalize

    def output_size(self, height: int, width: int) -> tuple[int, int]:
        from torchvision.transforms.functional import _compute_resized_output_size

        size = [self.size] if isinstance(self.size, int) else list(self.size)
        return tuple(_compute_resized_output_size((height, width), size, self.max_size))

    def cpu_resize(self, image: torch.Tensor, size: tuple[int, int]) -> torch.Tensor:
        pil = Image.fromarray(image.permute(1, 2, 0).cpu().numpy()).resize(
            size[::-1], self.resample
        )
        return torch.from_numpy(np.asarray(pil, dtype=np.float64).copy()).permute(2, 0, 1)

    def __call__(self, images: list[torch.Tensor]) -> torch.Tensor:
        """uint8 (H, W, C) images, all on one device -> float32 (N, C, crop_h, crop_w), in order."""
        out: dict[int, torch.Tensor] = {}
        groups: dict[tuple, list[int]] = {}
        for i, image in enumerate(images):
            groups.setdefault(tuple(image.shape), []).append(i)
        for (height, width, _), members in groups.items():
            batch = torch.stack([images[i] for i in members]).permute(0, 3, 1, 2)
            resized = self.output_size(height, width)
            if resized == (height, width):
                pixels = batch.to(torch.float64)
            else:
                order = pass_order((height, width), resized, self.resample)
                if order is None:  # not seen with any Pillow so far; exact all the same, on the CPU
                    log.warning(
                        "Pillow %s resizes %dx%d -> %dx%d in a way not reproduced on the GPU: "
                        "resizing those images on the CPU",
                        PIL.__version__,
                        width,
                        height,
                        resized[1],
                        resized[0],
                    )
                    pixels = torch.stack([self.cpu_resize(image, resized) for image in batch]).to(
                        batch.device
                    )
                else:
                    pixels = pil_resize(batch, resized, self.resample, order)
            # never larger than the resized image: split refuses such layouts
            crop_h, crop_w = self.crop
            top, left = (
                int(round((resized[0] - crop_h) / 2.0)),
                int(round((resized[1] - crop_w) / 2.0)),
            )
            pixels = pixels[..., top : top + crop_h, left : left + crop_w].to(torch.float32)
            # ToTensor, as a true division
            pixels = pixels / torch.tensor(255.0, device=pixels.device)
            for j, i in enumerate(members):
                out[i] = pixels[j]
        return self.normalize(torch.stack([out[i] for i in range(len(images))]))


def to_uint8(image: Image.Image) -> torch.Tensor:
    """The CPU half: the decoded image as a uint8 (H, W, 3) tensor (MaybeConvertMode's RGB
    first)."""
    return torch.from_numpy(
        np.array(image.convert("RGB") if image.mode != "RGB" else image, dtype=np.uint8)
    )


def split(preprocess) -> tuple[DevicePreprocess | None, str]:
    """(the GPU half, "") when `preprocess` is open_clip's layout, else (None, why not)."""
    from open_clip.transform import MaybeConvertMode, MaybeToTensor
    from torchvision import transforms as T

    steps = list(getattr(preprocess, "transforms", []))
    kinds = [type(step) for step in steps]
    if (
        kinds != [T.Resize, T.CenterCrop, MaybeConvertMode, MaybeToTensor, T.Normalize]
        or steps[2].mode != "RGB"
    ):
        return (
            None,
            f"preprocess is not open_clip's Resize/CenterCrop/ToTensor/Normalize: {preprocess!r}",
        )
    resize, crop = steps[0], steps[1]
    from torchvision.transforms import InterpolationMode

    if InterpolationMode(resize.interpolation) not in (
        InterpolationMode.BICUBIC,
        InterpolationMode.BILINEAR,
    ):
        return None, f"resize interpolation {resize.interpolation} has no exact GPU version here"
    size = [resize.size] if isinstance(resize.size, int) else list(resize.size)
    # resized height, width are at least this
    smallest = [size[0], size[0]] if len(size) == 1 else size
    if resize.max_size is not None or crop.size[0] > smallest[0] or crop.size[1] > smallest[1]:
        return (
            None,
            f"center crop {tuple(crop.size)} may exceed the resize {size} (max_size "
            f"{resize.max_size}): torchvision would pad",
        )
    return DevicePreprocess(resize, crop, steps[4]), ""
