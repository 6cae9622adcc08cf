"""A corrupted copy of a classification test set (3D Common Corruptions), made on the CPU.

Each image is loaded, resized and centre-cropped as ImageNet-C's (corruptions.imagenet_c,
`size`; 0 = original size), its depth loaded on the same grid (depth.py) where the corruption
needs one, corrupted at every severity (depth_corruptions.py, rgb_corruptions.py) and saved as PNG
(lossless, fixed settings: a rerun writes the same bytes). The depth-aware ones draw nothing at
random; the noises (iso_noise, low_light) draw from a seed per image, a hash of the set's seed, the
corruption and the image's manifest path (imagenet_c.image_seed), the same at every severity. So
the files depend neither on the order of the manifest nor on the workers. Writes
out_dir/s<severity>/<index>.png and out_dir/manifest.json (a classification manifest whose entries
keep `label` and add `severity` and `source_path`), all or nothing.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vlstress.errors import VlstressError
from vlstress.io import atomic_dir
from vlstress.suites.corruptions import imagenet_c
from vlstress.suites.corruptions_3d import depth as depths
from vlstress.suites.corruptions_3d import rgb_corruptions
from vlstress.suites.corruptions_3d.depth_corruptions import corrupt, to_uint8
from vlstress.suites.corruptions_3d.names import CORRUPTIONS, RGB, SEVERITIES, generable
from vlstress.testsets.manifest import ClassificationSet
from vlstress.testsets.manifest import write as write_manifest

FORMAT = "png"


@dataclass(frozen=True)
class Job:
    """What every worker needs besides its images (picklable, for spawned processes)."""

    name: str
    severities: tuple[int, ...]
    size: int
    seed: int  # the noises' (rgb_corruptions.RANDOM), hashed with each image's manifest path
    depth: str  # synthetic | a folder of 16-bit PNGs
    encoding: str
    out_dir: str


def check(name: str, severities: Sequence[int]) -> None:
    if name not in CORRUPTIONS:
        raise VlstressError(f"unknown 3D corruption {name!r}; known: {', '.join(CORRUPTIONS)}")
    if not generable(name):
        raise VlstressError(
            f"3D corruption {name!r} is read from the released ImageNet-3DCC only (docs/3d.md)"
        )
    if not severities or len(set(severities)) != len(severities):
        raise VlstressError(f"severities must be distinct values in 1..5, got {list(severities)}")
    bad = [s for s in severities if s not in SEVERITIES]
    if bad:
        raise VlstressError(f"3D corruption severity must be 1..5, got {bad}")


def corrupt_one(job: Job, index: int, source: str, key: str) -> int:
    """Every severity of one image (index, image file, manifest path); returns files written."""
    image = imagenet_c.load_rgb(source)
    original = image.size
    pixels = np.asarray(imagenet_c.resize_center_crop(image, job.size))
    if CORRUPTIONS[job.name] == RGB:
        seed = imagenet_c.image_seed(job.seed, job.name, key)
        outs = [rgb_corruptions.corrupt(pixels, job.name, s, seed) for s in job.severities]
    else:
        rgb = pixels.astype(np.float64) / 255.0
        depth = depths.load(job.depth, job.encoding, key, original, job.size)
        if depth.shape != rgb.shape[:2]:
            raise VlstressError(f"depth of {source}: shape {depth.shape}, image {rgb.shape[:2]}")
        try:
            outs = [to_uint8(corrupt(rgb, depth, job.name, s)) for s in job.severities]
        except ValueError as exc:
            raise VlstressError(f"cannot corrupt image {source}: {exc}") from None
    for severity, out in zip(job.severities, outs):
        path = Path(job.out_dir) / f"s{severity}" / imagenet_c.file_name(index, FORMAT)
        imagenet_c.save_image(out, path, FORMAT)
    return len(job.severities)


def corrupt_chunk(job: Job, chunk: Sequence[tuple[int, str, str]]) -> int:
    return sum(corrupt_one(job, *item) for item in chunk)


def run(job: Job, items: list[tuple[int, str, str]], workers: int) -> None:
    """Every image, in this process (1 worker) or a spawned pool (spawn: the parent may hold
    threads a fork would copy badly); a worker's error re-raised here."""
    if workers == 1:
        corrupt_chunk(job, items)
        return
    chunks = [items[i::workers] for i in range(workers)]
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        for future in [pool.submit(corrupt_chunk, job, chunk) for chunk in chunks]:
            future.result()


def generate(
    clean: ClassificationSet,
    name: str,
    severities: Sequence[int],
    out_dir: str | Path,
    *,
    depth: str = depths.SYNTHETIC,
    encoding: str = "midas-inverse",
    size: int = imagenet_c.DEFAULT_SIZE,
    seed: int = 0,
    workers: int = 1,
    provenance: dict[str, Any] | None = None,
) -> ClassificationSet:
    """Write the corrupted copy of `clean` (module docstring); `workers=0`: every core."""
    check(name, severities)
    imagenet_c.check_size(size)
    if CORRUPTIONS[name] == RGB:
        depth = depths.SYNTHETIC  # not read: recorded as none
    elif depth != depths.SYNTHETIC and not Path(depth).is_dir():
        raise VlstressError(f"depth folder not found: {depth} (or `synthetic`)")
    items = [
        (index, str(Path(clean.root) / entry["path"]), str(entry["path"]))
        for index, entry in enumerate(clean.images)
    ]
    workers = max(1, min(workers or imagenet_c.available_cores(), len(items)))
    out_dir = Path(out_dir)
    with atomic_dir(out_dir) as tmp:
        for severity in severities:
            (tmp / f"s{severity}").mkdir()
        job = Job(name, tuple(severities), size, seed, depth, encoding, str(tmp))
        run(job, items, workers)
        data = corrupted_set(clean, job, out_dir, provenance or {})
        write_manifest(tmp / "manifest.json", data)  # checks it too
    return data


def corrupted_set(
    clean: ClassificationSet, job: Job, out_dir: Path, provenance: dict[str, Any]
) -> ClassificationSet:
    """The manifest: one entry per (severity, image), severity-major; its source names the depth."""
    images = [
        {
            "path": f"s{severity}/{imagenet_c.file_name(index, FORMAT)}",
            "label": entry["label"],
            "severity": severity,
            "source_path": str(Path(clean.root) / entry["path"]),
        }
        for severity in job.severities
        for index, entry in enumerate(clean.images)
    ]
    return clean.derived(
        f"{clean.dataset}-3dcc-{job.name}",
        "corruption_3d",
        str(out_dir),
        images,
        {
            "corruption": job.name,
            "severities": list(job.severities),
            "size": job.size,
            "format": FORMAT,
            **depth_fields(job),
        },
        provenance=provenance,
    )


def depth_fields(job: Job) -> dict[str, Any]:
    """What the manifest says of the depth: none for a corruption of the image alone (its seed
    instead)."""
    if CORRUPTIONS[job.name] == RGB:
        return {"depth": "none (no depth needed)", "seed": job.seed}
    return {
        "depth": depths.label(job.depth, job.encoding),
        "depth_source": job.depth,
        **({"depth_encoding": job.encoding} if job.depth != depths.SYNTHETIC else {}),
    }
