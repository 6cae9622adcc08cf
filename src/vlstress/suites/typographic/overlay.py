"""Typographic attacks: the name of a wrong class written on each image (ImageNet-T / CIFAR-10-T
style).

As the pilot study's typographic sets (Wang et al. 2024, arXiv 2403.10499): every image
gets one wrong class name, written in plain text at a random size, colour and position.
CLIP reads text in images, so the written name pulls the zero-shot prediction towards it.

Per image i a numpy Generator seeded by (seed, i) draws, in this order:
  written       uniform among the classes other than the true label;
  font size     a fraction FONT_FRACTION of the image's shorter side (shrunk until the
                text fits the width);
  fill          RGB colour, uniform;
  stroke        width as a fraction STROKE_FRACTION of the font size, RGB colour, uniform;
  position      the text box (stroke included) uniform over positions fully inside the image.
Every image draws the same number of values, so image i's style does not depend on the
others. The text is always legible: the fill is then moved towards black or white until its
WCAG contrast with the mean colour of the background under the box is at least MIN_CONTRAST
(4.5:1, the WCAG AA level for text), and a stroke likewise against the fill (a stroke of the
fill's own colour would merge the letters). The achieved contrasts are recorded per image.
Images are first resized and centre-cropped like the corruptions
(vlstress.images.corruptions.resize_center_crop; `size=0` keeps the original), then
written as PNG: deterministic bytes for given Pillow/FreeType versions.

Font: DejaVu Sans as shipped with matplotlib (no system font lookup, the same file
everywhere); its path relative to matplotlib's data folder and its sha256 go in the manifest.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from vlstress.errors import VlstressError
from vlstress.io import atomic_dir, sha256_file
from vlstress.suites.corruptions.imagenet_c import (
    DEFAULT_SIZE,
    check_size,
    load_rgb,
    resize_center_crop,
)
from vlstress.testsets.manifest import ClassificationSet
from vlstress.testsets.manifest import write as write_manifest

FONT_FILE = "fonts/ttf/DejaVuSans.ttf"  # relative to matplotlib.get_data_path()
FONT_FRACTION = (0.08, 0.20)  # font size / shorter image side
STROKE_FRACTION = (0.0, 0.10)  # stroke width / font size
MIN_FONT_PX = 6
MIN_CONTRAST = 4.5  # WCAG 2 AA for text: (L_light + 0.05) / (L_dark + 0.05)


@dataclass(frozen=True)
class TextStyle:
    """What was drawn on one image (recorded in its manifest entry)."""

    written: int  # class index of the written name
    text: str
    font_size: int  # pixels
    fill: tuple[int, int, int]
    stroke_width: int  # pixels
    stroke_fill: tuple[int, int, int]
    # left, top, right, bottom (exclusive) of the inked text, stroke included
    box: tuple[int, int, int, int]
    contrast: float  # WCAG contrast of the fill with the background under the box
    stroke_contrast: float | None  # of the stroke with the fill (None without a stroke)


def font_path() -> Path:
    import matplotlib

    path = Path(matplotlib.get_data_path()) / FONT_FILE
    if not path.is_file():
        raise VlstressError(
            f"font not found: {path} (matplotlib ships DejaVu Sans; reinstall matplotlib)"
        )
    return path


def font_record() -> dict[str, str]:
    import matplotlib

    return {
        "file": FONT_FILE,
        "relative_to": "matplotlib data path",
        "sha256": sha256_file(font_path()),
        "matplotlib": matplotlib.__version__,
    }


@cache
def font(size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(font_path()), size)


def wrong_class(label: int, n_classes: int, rng: np.random.Generator) -> int:
    """Uniform among the n_classes - 1 classes other than `label`."""
    other = int(rng.integers(n_classes - 1))
    return other + 1 if other >= label else other


def text_box(
    draw: ImageDraw.ImageDraw, text: str, size: int, stroke: int
) -> tuple[int, int, int, int]:
    # Pillow types the box as floats; a FreeType font's box is whole pixels (int() keeps it as is)
    left, top, right, bottom = draw.textbbox((0, 0), text, font=font(size), stroke_width=stroke)
    return int(left), int(top), int(right), int(bottom)


def luminance(rgb: np.ndarray) -> np.ndarray:
    """WCAG relative luminance of sRGB colours (0..255, last axis RGB)."""
    c = np.asarray(rgb, dtype=np.float64) / 255.0
    linear = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return linear @ np.array([0.2126, 0.7152, 0.0722])


def contrast(l1: float, l2: float) -> float:
    """WCAG contrast ratio of two relative luminances (1 to 21)."""
    return (max(l1, l2) + 0.05) / (min(l1, l2) + 0.05)


def legible(colour: tuple[int, ...], against: float) -> tuple[tuple[int, int, int], float]:
    """`colour` moved towards black or white (whichever can reach further from the luminance
    `against`) by the least step of 1% that gives a contrast of MIN_CONTRAST; (colour, contrast)."""
    base = np.asarray(colour, dtype=np.float64)
    end = np.zeros(3) if contrast(0.0, against) >= contrast(1.0, against) else np.full(3, 255.0)
    for t in np.linspace(0.0, 1.0, 101):
        moved = np.rint(base + t * (end - base))
        ratio = contrast(float(luminance(moved)), against)
        if ratio >= MIN_CONTRAST:
            return (int(moved[0]), int(moved[1]), int(moved[2])), ratio
    raise AssertionError("black or white always reaches 4.58:1")  # sqrt(21) > MIN_CONTRAST


def draw_style(
    image_size: tuple[int, int],
    label: int,
    classes: list[str],
    rng: np.random.Generator,
    image: Image.Image | None = None,
) -> TextStyle:
    """The style of one image (see the module docstring for the draws and their order); the fill
    is made legible against `image` under the box (None: a mid-grey background)."""
    width, height = image_size
    written = wrong_class(label, len(classes), rng)
    font_fraction = rng.uniform(*FONT_FRACTION)
    fill = tuple(int(v) for v in rng.integers(0, 256, 3))
    stroke_fraction = rng.uniform(*STROKE_FRACTION)
    stroke_fill: tuple[int, ...] = tuple(int(v) for v in rng.integers(0, 256, 3))
    u, v = rng.random(2)
    text = classes[written]
    measure = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    size = max(MIN_FONT_PX, round(font_fraction * min(width, height)))
    while True:  # shrink until the text fits the image (long class names)
        stroke = round(stroke_fraction * size)
        left, top, right, bottom = text_box(measure, text, size, stroke)
        if (right - left <= width and bottom - top <= height) or size == MIN_FONT_PX:
            break
        size -= 1
    if right - left > width or bottom - top > height:
        raise VlstressError(
            f"class name {text!r} does not fit a {width}x{height} image even at {size} px; use a "
            "larger --size"
        )
    x = int(u * (width - (right - left) + 1))  # box left edge, uniform over inside positions
    y = int(v * (height - (bottom - top) + 1))
    box = (x, y, x + right - left, y + bottom - top)
    under = (
        luminance(np.asarray(image.crop(box), dtype=np.float64).reshape(-1, 3).mean(axis=0))
        if image is not None
        else float(luminance(np.full(3, 128.0)))
    )
    fill, ratio = legible(fill, float(under))
    stroke_ratio = None
    if stroke:
        stroke_fill, stroke_ratio = legible(stroke_fill, float(luminance(np.asarray(fill))))
    stroke_rgb = (int(stroke_fill[0]), int(stroke_fill[1]), int(stroke_fill[2]))
    return TextStyle(written, text, size, fill, stroke, stroke_rgb, box, ratio, stroke_ratio)


def write_text(image: Image.Image, style: TextStyle) -> Image.Image:
    """The image with the style's text drawn in its box."""
    out = image.copy()
    draw = ImageDraw.Draw(out)
    left, top, _, _ = text_box(draw, style.text, style.font_size, style.stroke_width)
    origin = (style.box[0] - left, style.box[1] - top)  # textbbox is offset from the drawing origin
    draw.text(
        origin,
        style.text,
        font=font(style.font_size),
        fill=style.fill,
        stroke_width=style.stroke_width,
        stroke_fill=style.stroke_fill,
    )
    return out


def image_rng(seed: int, index: int) -> np.random.Generator:
    return np.random.default_rng([seed, index])


def generate(
    clean: ClassificationSet,
    seed: int,
    out_dir: str | Path,
    *,
    size: int = DEFAULT_SIZE,
    provenance: dict[str, Any] | None = None,
    progress: bool = True,
) -> ClassificationSet:
    """Write out_dir/images/<index>.png (a wrong class name on each image) and
    out_dir/manifest.json; all or nothing."""
    from tqdm.auto import tqdm

    check_size(size)
    if len(clean.classes) < 2:
        raise VlstressError(
            f"a typographic attack needs at least 2 classes, {clean.dataset} has "
            f"{len(clean.classes)}"
        )
    out_dir = Path(out_dir)
    images = []
    with atomic_dir(out_dir) as tmp:
        (tmp / "images").mkdir()
        for index, entry in enumerate(
            tqdm(clean.images, desc="typographic", unit="img", disable=not progress)
        ):
            source = Path(clean.root) / entry["path"]
            image = resize_center_crop(load_rgb(source), size)
            style = draw_style(
                image.size, entry["label"], clean.classes, image_rng(seed, index), image
            )
            name = f"images/{index:06d}.png"
            write_text(image, style).save(tmp / name, format="PNG", compress_level=6)
            record = asdict(style)
            record.update(
                path=name,
                label=entry["label"],
                source_path=str(source),
                box=list(style.box),
                fill=list(style.fill),
                stroke_fill=list(style.stroke_fill),
            )
            images.append(record)
        data = clean.derived(
            f"{clean.dataset}-t",
            "typographic",
            str(out_dir),
            images,
            {
                "seed": seed,
                "size": size,
                "font": font_record(),
            },
            provenance=provenance or {},
        )
        write_manifest(tmp / "manifest.json", data)  # checks it too
    return data
