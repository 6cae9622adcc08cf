"""The depth of a test image: read from a folder of 16-bit PNGs, or a labelled synthetic ramp.

A depth folder holds one PNG per test image at the image's relative path with the suffix `.png`
(`n01440764/ILSVRC2012_val_00000293.JPEG` -> `<folder>/n01440764/ILSVRC2012_val_00000293.png`).
Its 16-bit values are decoded by an encoding (create_3dcc/dataset.py):

  midas-inverse  how ImageNet-3DCC was made (MiDaS predicts inverse depth): value / 512 is the
                 inverse depth, depth = 1 / (value / 512 + 1e-6) clamped to [0, 0.5];
  taskonomy      value / 8000, and every value >= 1 (no measurement) set to the largest one below 1.

Geometry. A depth of the original image's size gets the image's resize and centre crop (nearest
neighbour, never interpolated across an edge); a depth of the size of the cropped image is taken
as it is; any other size is first resized (nearest) to the original image's size. So a depth
predicted at a network's own resolution still lines up with the image, coarsely.

`synthetic` (no folder): a vertical ramp from 0.5 at the top row (far, the clamp of
midas-inverse) to 0.05 at the bottom row (near): the ground-plane prior of a photo, for demos. It
is no measurement of the scene, and the records say so (`depth: synthetic ramp (not measured)`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, UnidentifiedImageError

from vlstress.errors import VlstressError
from vlstress.suites.corruptions_3d.names import ENCODINGS

SYNTHETIC = "synthetic"
SYNTHETIC_FAR, SYNTHETIC_NEAR = 0.5, 0.05
MIDAS_SCALE, MIDAS_EPS, MIDAS_MAX = 512.0, 1e-6, 0.5
TASKONOMY_SCALE = 8000.0
SIXTEEN_BIT_MODES = ("I;16", "I;16B", "I;16L", "I")


def label(source: str, encoding: str) -> str:
    """What a record and a manifest say of the depth used."""
    if source == SYNTHETIC:
        return (
            f"synthetic ramp (not measured): {SYNTHETIC_FAR} at the top to {SYNTHETIC_NEAR} "
            "at the bottom"
        )
    return f"measured ({encoding})"


def synthetic(height: int, width: int) -> np.ndarray:
    """The ramp: far at the top row, near at the bottom, the same across a row."""
    column = np.linspace(SYNTHETIC_FAR, SYNTHETIC_NEAR, height)
    return np.repeat(column[:, None], width, axis=1)


def decode(values: np.ndarray, encoding: str, path: Path | str = "") -> np.ndarray:
    """16-bit values -> depth (float64) by `encoding`."""
    values = values.astype(np.float64)
    if encoding == "midas-inverse":
        return np.clip(1.0 / (values / MIDAS_SCALE + MIDAS_EPS), 0.0, MIDAS_MAX)
    if encoding == "taskonomy":
        depth = values / TASKONOMY_SCALE
        measured = depth < 1.0
        if not measured.any():
            raise VlstressError(f"depth {path}: no measured value (every value >= 8000)")
        depth[~measured] = depth[measured].max()
        return depth
    raise VlstressError(f"unknown depth encoding {encoding!r}; known: {', '.join(ENCODINGS)}")


def depth_file(folder: str | Path, image_path: str) -> Path:
    """The depth PNG of a test image (its manifest path, suffix .png)."""
    return Path(folder) / Path(image_path).with_suffix(".png")


def read_values(path: Path) -> np.ndarray:
    """The raw 16-bit values of a depth PNG, or a VlstressError naming the file."""
    try:
        with Image.open(path) as img:
            if img.mode not in SIXTEEN_BIT_MODES:
                raise VlstressError(
                    f"depth {path}: mode {img.mode}, not a 16-bit single-channel PNG"
                )
            return np.asarray(img).astype(np.float64)
    except FileNotFoundError:
        raise VlstressError(f"depth not found: {path} (one 16-bit PNG per test image)") from None
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        raise VlstressError(f"depth is corrupt or unreadable: {path} ({exc})") from None


def crop_box(size: tuple[int, int], side: int) -> tuple[tuple[int, int], tuple[int, int, int, int]]:
    """The resize and crop box of imagenet_c.resize_center_crop for an image of `size` (w, h)."""
    short = round(256 * side / 224)
    width, height = size
    new = (
        (short, int(short * height / width))
        if width <= height
        else (int(short * width / height), short)
    )
    left, top = int(round((new[0] - side) / 2.0)), int(round((new[1] - side) / 2.0))
    return new, (left, top, left + side, top + side)


def aligned(values: np.ndarray, original: tuple[int, int], side: int) -> np.ndarray:
    """Raw depth values on the grid of the image after its resize and crop to `side` (0: the
    original size), nearest neighbour (module docstring, Geometry)."""
    height, width = values.shape
    target = original if side == 0 else (side, side)
    if (width, height) == target and (width, height) != original:
        return values  # already at the cropped image's size
    image = Image.fromarray(values.astype(np.float32), mode="F")
    if (width, height) != original:
        image = image.resize(original, Image.Resampling.NEAREST)
    if side:
        new, box = crop_box(original, side)
        image = image.resize(new, Image.Resampling.NEAREST).crop(box)
    return np.asarray(image, dtype=np.float64)


def load(
    source: str, encoding: str, image_path: str, original: tuple[int, int], side: int
) -> np.ndarray:
    """The depth of one test image on its cropped grid (float64, HxW): the synthetic ramp, or its
    PNG in the folder `source` decoded by `encoding`."""
    if source == SYNTHETIC:
        width, height = original if side == 0 else (side, side)
        return synthetic(height, width)
    path = depth_file(source, image_path)
    return decode(aligned(read_values(path), original, side), encoding, path)
