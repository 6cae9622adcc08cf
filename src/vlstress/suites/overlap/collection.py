"""The training collection of the overlap analysis (`vlstress overlap-collection`): its images as
a list, and the planted duplicates that calibrate the near-duplicate threshold.

Kinds: `folder` (every image below it, recursively, sorted), `shards` (a text file listing
webdataset-style `.tar` shards, one path per line: their image members are extracted, in shard and
member order, to `<out>/shards/`), `embeddings` (an `.npy` of the detector's L2-normalised image
embeddings a user already has: nothing to list or embed; the file is checked here,
`embedding_file`). `max_images` keeps the first N.

Planted duplicates: a seeded sample of `planted` training images, each copied three ways, the
alterations near-duplicate detection must survive (the pilot study's YFCC100M question): resized to
half size, re-encoded as JPEG at quality 40, centre cropped to 80%. Their nearest training image
should be their original; the threshold is calibrated on their similarities.
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from vlstress.errors import VlstressError
from vlstress.io import atomic_dir, write_json
from vlstress.suites.overlap import embedding_file

EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff")
TRANSFORMS = ("resized", "reencoded", "cropped")


def folder_images(folder: Path) -> list[Path]:
    if not folder.is_dir():
        raise VlstressError(f"training folder not found: {folder}")
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in EXTENSIONS)


def shard_images(shard_list: Path, out: Path, limit: int | None) -> list[Path]:
    """Extract the image members of every shard listed in `shard_list` (in order) below `out`."""
    if not shard_list.is_file():
        raise VlstressError(f"shard list not found: {shard_list}")
    shards = [line.strip() for line in shard_list.read_text().splitlines() if line.strip()]
    found: list[Path] = []
    for number, shard in enumerate(shards):
        path = Path(shard) if Path(shard).is_absolute() else shard_list.parent / shard
        try:
            with tarfile.open(path) as tar:
                members = sorted((m for m in tar.getmembers() if m.isfile()), key=lambda m: m.name)
                for member in members:
                    if Path(member.name).suffix.lower() not in EXTENSIONS:
                        continue
                    if limit is not None and len(found) >= limit:
                        return found
                    target = out / f"{number:05d}" / Path(member.name).name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    data = tar.extractfile(member)
                    target.write_bytes(data.read() if data else b"")
                    found.append(target)
        except (OSError, tarfile.TarError) as exc:
            raise VlstressError(
                f"shard {path} (listed in {shard_list}) is unreadable: {exc}"
            ) from None
    return found


def planted_copy(image: Image.Image, transform: str) -> Image.Image:
    """One near-duplicate of `image`."""
    if transform == "resized":
        return image.resize(
            (max(1, image.width // 2), max(1, image.height // 2)), Image.Resampling.BILINEAR
        )
    if transform == "reencoded":
        buffer = io.BytesIO()
        image.save(buffer, format="JPEG", quality=40)
        return Image.open(io.BytesIO(buffer.getvalue())).convert("RGB")
    if transform == "cropped":
        w, h = image.size
        left, top = round(w * 0.1), round(h * 0.1)
        return image.crop((left, top, w - left, h - top))
    raise VlstressError(f"unknown planted transform {transform!r}; known: {', '.join(TRANSFORMS)}")


def build(
    kind: str, path: Path, max_images: int | None, planted: int, seed: int, out: Path
) -> dict[str, Any]:
    """Write `<out>/collection.json` (the training images, the planted copies and their originals),
    the planted copies under `<out>/planted/` and, for shards, the extracted images."""
    from vlstress.suites.corruptions.imagenet_c import load_rgb

    with atomic_dir(out) as tmp:
        if kind == "folder":
            images = folder_images(path)[:max_images]
            listed = [str(p) for p in images]
        elif kind == "shards":
            images = shard_images(path, tmp / "shards", max_images)
            listed = [str(out / p.relative_to(tmp)) for p in images]
        elif kind == "embeddings":
            embedding_file.load(path)  # a clear error now, not a traceback at detection
            images, listed = [], []
        else:
            raise VlstressError(f"unknown training collection kind {kind!r}")
        if kind != "embeddings" and not images:
            raise VlstressError(f"training collection {path} ({kind}) has no images")
        copies = []
        if images:
            rng = np.random.default_rng(seed)
            chosen = sorted(rng.choice(len(images), size=min(planted, len(images)), replace=False))
            (tmp / "planted").mkdir()
            for row in chosen:
                original = load_rgb(images[row])
                for transform in TRANSFORMS:
                    name = f"planted/{int(row):07d}_{transform}.png"
                    planted_copy(original, transform).save(tmp / name)
                    copies.append(
                        {"path": str(out / name), "original": int(row), "transform": transform}
                    )
        body = {
            "kind": kind,
            "source": str(path),
            "images": listed,
            "planted": copies,
            "seed": seed,
            "embeddings": str(path) if kind == "embeddings" else None,
        }
        write_json(tmp / "collection.json", body)
    return body
