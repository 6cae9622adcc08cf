"""ImageNet-P's 14 perturbation sequences, frame by frame, after
`ImageNet-P/create_p/make_imagenet_p.py` of hendrycks/robustness (commit 8190fe3).

Every sequence starts from the image with its shorter side resized to 256 (scaled by size / 224)
and is centre cropped to `size` (224 as in the paper). Test perturbations (the paper's 10):
gaussian_noise, shot_noise, motion_blur, zoom_blur, snow, brightness, translate, rotate, tilt,
scale; validation ones: speckle_noise, gaussian_blur, spatter, shear. Frame counts and parameters
are the reference's (31 frames, translate 41). Noise strength depends on the difficulty (the
reference's `_2`, `_3` sets); for the others difficulty is the stride the metrics read the
sequence with (vlstress.suites.stability.metrics), not a property of the frames.

What differs from the released files, and why:
- frames are PNG, not H.264 videos (the reference encodes each sequence with ffmpeg, `-crf 20`,
  or `-tune grain` for noise): lossless frames add no codec artefacts to the perturbation;
- motion_blur and snow's streaks use imagecorruptions' NumPy motion blur (the ImageNet-C port,
  as the corruptions suite) instead of ImageMagick's MagickMotionBlurImage (not installed here);
- affine frames (translate, rotate, scale, zoom_blur, shear) are PIL's affine transform with
  torchvision's inverse matrix, byte for byte what the reference's `trn_F.affine` gives on a PIL
  image (tests/test_stability.py compares), without importing torch in a data step;
- random draws come from a NumPy Generator seeded per (seed, perturbation, image): reruns give
  the same bytes, and an image's sequence does not depend on the others.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from PIL import Image

from vlstress.errors import VlstressError

Frames = list[np.ndarray]  # H x W x 3 uint8 each


@dataclass(frozen=True)
class Perturbation:
    # (image with shorter side resized, crop size, rng, difficulty) -> frames
    make: Callable[[Image.Image, int, np.random.Generator, int], Frames]
    noise: bool  # frames compared with frame 0 (else consecutive frames at stride difficulty)
    frames: int
    split: str  # "test" (the paper's 10) or "validation"
    description: str


def center_crop(image: Image.Image, size: int) -> Image.Image:
    """torchvision CenterCrop on a PIL image (rounded offsets)."""
    width, height = image.size
    left, top = int(round((width - size) / 2.0)), int(round((height - size) / 2.0))
    return image.crop((left, top, left + size, top + size))


def resize_shorter(image: Image.Image, size: int) -> Image.Image:
    """Shorter side to round(256 * size / 224), bilinear (torchvision Resize on a PIL image)."""
    short = round(256 * size / 224)
    width, height = image.size
    new = (
        (short, int(short * height / width))
        if width <= height
        else (int(short * width / height), short)
    )
    return image.resize(new, Image.Resampling.BILINEAR)


def affine(
    image: Image.Image,
    *,
    angle: float = 0.0,
    translate: tuple[float, float] = (0.0, 0.0),
    scale: float = 1.0,
    shear: float = 0.0,
    resample: Image.Resampling = Image.Resampling.NEAREST,
) -> Image.Image:
    """torchvision.transforms.functional.affine on a PIL image (centre = size / 2, black fill)."""
    cx, cy = image.size[0] * 0.5, image.size[1] * 0.5
    tx, ty = translate
    rot, sx, sy = math.radians(angle), math.radians(shear), 0.0
    a = math.cos(rot - sy) / math.cos(sy)
    b = -math.cos(rot - sy) * math.tan(sx) / math.cos(sy) - math.sin(rot)
    c = math.sin(rot - sy) / math.cos(sy)
    d = -math.sin(rot - sy) * math.tan(sx) / math.cos(sy) + math.cos(rot)
    matrix = [x / scale for x in (d, -b, 0.0, -c, a, 0.0)]
    matrix[2] += matrix[0] * (-cx - tx) + matrix[1] * (-cy - ty) + cx
    matrix[5] += matrix[3] * (-cx - tx) + matrix[4] * (-cy - ty) + cy
    return image.transform(image.size, Image.Transform.AFFINE, matrix, resample)


def _pixels(image: Image.Image) -> np.ndarray:
    return np.asarray(image, dtype=np.uint8)


def _to_uint8(x: np.ndarray) -> np.ndarray:
    """np.uint8(255 * clip(x)): truncation, as the reference (and torchvision's ToPILImage)."""
    return (255 * np.clip(x, 0, 1)).astype(np.uint8)


# ------------------------------------------------------------------ noise (compared with frame 0)

GAUSSIAN_SIGMA = {1: 0.03, 2: 0.05, 3: 0.08}
SHOT_RATE = {1: 300, 2: 120, 3: 60}
SPECKLE_SIGMA = {1: 0.05, 2: 0.10, 3: 0.15}


def gaussian_noise(image, size, rng, difficulty):
    x = _pixels(center_crop(image, size)) / 255.0
    sigma = GAUSSIAN_SIGMA[difficulty]
    return [_pixels(center_crop(image, size))] + [
        _to_uint8(x + sigma * rng.standard_normal(x.shape)) for _ in range(30)
    ]


def shot_noise(image, size, rng, difficulty):
    x = _pixels(center_crop(image, size)) / 255.0
    rate = SHOT_RATE[difficulty]
    return [_pixels(center_crop(image, size))] + [
        _to_uint8(rng.poisson(x * rate) / rate) for _ in range(30)
    ]


def speckle_noise(image, size, rng, difficulty):
    x = _pixels(center_crop(image, size)) / 255.0
    sigma = SPECKLE_SIGMA[difficulty]
    return [_pixels(center_crop(image, size))] + [
        _to_uint8(x + x * rng.normal(size=x.shape, scale=sigma)) for _ in range(30)
    ]


# ------------------------------------------------------------------ motion (consecutive frames)


def _motion_blur(x: np.ndarray, radius: float, sigma: float, angle: float) -> np.ndarray:
    from imagecorruptions.corruptions import _motion_blur as blur

    return blur(x, radius=radius, sigma=sigma, angle=angle)


def motion_blur(image, size, rng, difficulty):
    x = _pixels(center_crop(image, size))
    return [np.uint8(np.clip(_motion_blur(x, 10, 3, (i - 30) * 4), 0, 255)) for i in range(31)]


def zoom_blur(image, size, rng, difficulty):
    first = center_crop(image, size)
    total = _pixels(first).astype(np.float32) / 255.0
    frames = [_pixels(first)]
    for i in range(1, 31):
        zoomed = affine(image, scale=1 + 0.004 * i, resample=Image.Resampling.BILINEAR)
        total += _pixels(center_crop(zoomed, size)).astype(np.float32) / 255.0
        frames.append(np.uint8(255 * (total / (i + 1))))
    return frames


def clipped_zoom(img: np.ndarray, zoom_factor: float) -> np.ndarray:
    """The reference's centre zoom of a square H x W x C array, trimmed back to H x W."""
    from scipy.ndimage import zoom

    h = img.shape[0]
    ch = int(np.ceil(h / zoom_factor))
    top = (h - ch) // 2
    img = zoom(img[top : top + ch, top : top + ch], (zoom_factor, zoom_factor, 1), order=1)
    trim = (img.shape[0] - h) // 2
    return img[trim : trim + h, trim : trim + h]


def snow(image, size, rng, difficulty):
    import cv2

    x = _pixels(center_crop(image, size)) / 255.0
    layer = rng.normal(size=(size, size), loc=0.05, scale=0.3)
    layer = clipped_zoom(layer[..., np.newaxis], 3)
    layer[layer < 0.5] = 0
    layer = np.uint8(np.clip(layer.squeeze(), 0, 1) * 255).astype(np.float32)
    gray = cv2.cvtColor(np.float32(x), cv2.COLOR_RGB2GRAY).reshape(size, size, 1)
    base = 0.85 * x + (1 - 0.85) * np.maximum(x, gray * 1.5 + 0.5)
    frames = []
    for i in range(31):
        moving = np.clip(_motion_blur(layer, 14, 4, i * 4 - 150), 0, 255)
        moving = np.uint8(moving)[..., np.newaxis] / 255.0
        frames.append(_to_uint8(base + moving + np.rot90(moving, k=2)))
    return frames


def brightness(image, size, rng, difficulty):
    from skimage import color

    x = _pixels(center_crop(image, size)) / 255.0
    hsv = color.rgb2hsv(x)
    frames = []
    for i in range(31):
        shifted = hsv.copy()
        shifted[:, :, 2] = np.clip(shifted[:, :, 2] + (i - 15) * 2 / 100.0, 0, 1)
        frames.append(np.uint8(color.hsv2rgb(shifted) * 255))
    return frames


def translate(image, size, rng, difficulty):
    return [_pixels(center_crop(affine(image, translate=(i - 20, 0)), size)) for i in range(41)]


def rotate(image, size, rng, difficulty):
    bilinear = Image.Resampling.BILINEAR
    return [
        _pixels(center_crop(affine(image, angle=i - 15, resample=bilinear), size))
        for i in range(31)
    ]


def scale(image, size, rng, difficulty):
    bilinear = Image.Resampling.BILINEAR
    return [
        _pixels(center_crop(affine(image, scale=(i * 2.5 + 40) / 100.0, resample=bilinear), size))
        for i in range(31)
    ]


def shear(image, size, rng, difficulty):
    bilinear = Image.Resampling.BILINEAR
    return [
        _pixels(center_crop(affine(image, shear=i - 15, resample=bilinear), size))
        for i in range(31)
    ]


def tilt(image, size, rng, difficulty):
    import cv2

    x = _pixels(image)
    h, w = x.shape[:2]
    f = np.sqrt(w**2 + h**2)
    frames = []
    for i in range(31):
        phi = theta = np.deg2rad(i - 15)
        p1 = np.array([[1, 0, -w / 2], [0, 1, -h / 2], [0, 0, 1], [0, 0, 1]])
        rx = np.array(
            [
                [1, 0, 0, 0],
                [0, np.cos(theta), -np.sin(theta), 0],
                [0, np.sin(theta), np.cos(theta), 0],
                [0, 0, 0, 1],
            ]
        )
        ry = np.array(
            [
                [np.cos(phi), 0, -np.sin(phi), 0],
                [0, 1, 0, 0],
                [np.sin(phi), 0, np.cos(phi), 0],
                [0, 0, 0, 1],
            ]
        )
        t = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, f], [0, 0, 0, 1]])
        p2 = np.array([[f, 0, w / 2, 0], [0, f, h / 2, 0], [0, 0, 1, 0]])
        warped = cv2.warpPerspective(x, p2 @ t @ rx @ ry @ p1, (w, h))
        frames.append(_pixels(center_crop(Image.fromarray(warped), size)))
    return frames


def gaussian_blur(image, size, rng, difficulty):
    from skimage.filters import gaussian

    x = _pixels(center_crop(image, size)) / 255.0
    return [
        np.uint8(255 * gaussian(x, sigma=0.25 + 0.035 * i, channel_axis=-1, truncate=6.0))
        for i in range(31)
    ]


def spatter(image, size, rng, difficulty):
    import cv2
    from skimage.filters import gaussian

    x = cv2.cvtColor(
        _pixels(center_crop(image, size)).astype(np.float32) / 255.0, cv2.COLOR_BGR2BGRA
    )
    liquid = gaussian(rng.normal(size=x.shape[:2], loc=0.65, scale=0.27), sigma=3.7)
    liquid[liquid < 0.69] = 0
    color = cv2.cvtColor(
        np.concatenate(
            [v / 255.0 * np.ones_like(x[..., :1]) for v in (175, 238, 238)], axis=2
        ).astype(np.float32),
        cv2.COLOR_BGR2BGRA,
    )
    ker = np.array([[-2, -1, 0], [-1, 1, 1], [0, 1, 2]])
    frames = []
    for _ in range(31):
        layer = (liquid * 255).astype(np.uint8)
        dist = cv2.distanceTransform(255 - cv2.Canny(layer, 50, 150), cv2.DIST_L2, 5)
        _, dist = cv2.threshold(dist, 20, 20, cv2.THRESH_TRUNC)
        dist = cv2.equalizeHist(cv2.blur(dist, (3, 3)).astype(np.uint8))
        dist = cv2.blur(cv2.filter2D(dist, cv2.CV_8U, ker), (3, 3)).astype(np.float32)
        m = cv2.cvtColor(layer * dist, cv2.COLOR_GRAY2BGRA)
        m /= np.maximum(np.max(m, axis=(0, 1)), 1e-12)  # a dry image (no liquid) stays clean
        m *= 0.6
        frames.append(
            np.uint8(cv2.cvtColor(np.clip(x + m * color, 0, 1), cv2.COLOR_BGRA2BGR) * 255)
        )
        liquid = np.apply_along_axis(
            lambda col: np.convolve(col, np.array([0.05, 0.1, 0.15, 0.7]), mode="same"),
            axis=0,
            arr=liquid,
        )
    return frames


PERTURBATIONS: dict[str, Perturbation] = {
    "gaussian_noise": Perturbation(
        gaussian_noise, True, 31, "test", "N(0, 0.03/0.05/0.08) per frame"
    ),
    "shot_noise": Perturbation(shot_noise, True, 31, "test", "Poisson, rate 300/120/60 per frame"),
    "motion_blur": Perturbation(
        motion_blur, False, 31, "test", "radius 10, sigma 3, angle 4(i-30)"
    ),
    "zoom_blur": Perturbation(zoom_blur, False, 31, "test", "running mean of zooms 1 + 0.004 i"),
    "snow": Perturbation(snow, False, 31, "test", "one snow layer, streak angle 4i - 150"),
    "brightness": Perturbation(brightness, False, 31, "test", "HSV value + 0.02 (i - 15)"),
    "translate": Perturbation(translate, False, 41, "test", "horizontal shift i - 20 px"),
    "rotate": Perturbation(rotate, False, 31, "test", "rotation i - 15 degrees"),
    "tilt": Perturbation(tilt, False, 31, "test", "3-D rotation i - 15 degrees about both axes"),
    "scale": Perturbation(scale, False, 31, "test", "zoom (2.5 i + 40) / 100"),
    "speckle_noise": Perturbation(
        speckle_noise, True, 31, "validation", "x + x N(0, 0.05/0.10/0.15)"
    ),
    "gaussian_blur": Perturbation(gaussian_blur, False, 31, "validation", "sigma 0.25 + 0.035 i"),
    "spatter": Perturbation(
        spatter, False, 31, "validation", "a liquid layer flowing a step a frame"
    ),
    "shear": Perturbation(shear, False, 31, "validation", "shear i - 15 degrees"),
}
TEST = tuple(name for name, p in PERTURBATIONS.items() if p.split == "test")


def check(name: str) -> Perturbation:
    if name not in PERTURBATIONS:
        from difflib import get_close_matches

        close = get_close_matches(name, list(PERTURBATIONS), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise VlstressError(
            f"unknown perturbation {name!r}{hint}; known: {', '.join(PERTURBATIONS)}"
        )
    return PERTURBATIONS[name]


def check_difficulty(difficulty: int) -> None:
    if difficulty not in (1, 2, 3):
        raise VlstressError(f"difficulty must be 1, 2 or 3 (ImageNet-P), got {difficulty}")


def sequence(image: Image.Image, name: str, *, size: int, seed: int, difficulty: int = 1) -> Frames:
    """The frames of one perturbation of one image (RGB, any size): seeded, size x size each."""
    perturbation = check(name)
    check_difficulty(difficulty)
    rng = np.random.default_rng(seed)
    frames = perturbation.make(resize_shorter(image, size), size, rng, difficulty)
    return [np.ascontiguousarray(frame[..., :3], dtype=np.uint8) for frame in frames]
