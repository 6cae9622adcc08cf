"""A test set's perturbation sequences as a labelled test set of frames (`vlstress
perturbation-sequences`): `<out>/<image index>/<frame>.png` and a manifest whose entries carry
`sequence` (the image's index in the sample) and `frame`, so the frames are embedded by the
model's zero-shot image job like any other set and regrouped into sequences to be scored.

All or nothing: frames are written in a temporary folder that replaces the output only when every
image succeeded. Work is spread over processes by image (the frames do not depend on `workers`).
"""

from __future__ import annotations

import hashlib
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vlstress.io import atomic_dir
from vlstress.suites.corruptions.imagenet_c import available_cores, load_rgb, save_image
from vlstress.suites.stability import perturbations
from vlstress.testsets.manifest import ClassificationSet
from vlstress.testsets.manifest import write as write_manifest


@dataclass(frozen=True)
class Job:
    """What a worker needs besides its image (picklable)."""

    perturbation: str
    size: int
    seed: int
    difficulty: int
    out_dir: str


def image_seed(seed: int, perturbation: str, key: str) -> int:
    """Seed of one image's sequence: hash of (seed, perturbation, its manifest path), so it does
    not depend on the sample's order or on the other images."""
    digest = hashlib.sha256(f"{seed}\0{perturbation}\0{key}".encode()).digest()
    return int.from_bytes(digest[:16], "little")


def sample(n_total: int, n_images: int | None, seed: int) -> list[int]:
    """Sorted rows of a seeded sample of `n_images` (all when None or larger than the set)."""
    if n_images is None or n_images >= n_total:
        return list(range(n_total))
    rng = np.random.default_rng(seed)
    return sorted(int(i) for i in rng.choice(n_total, size=n_images, replace=False))


def sequence_set(
    clean: ClassificationSet,
    rows: list[int],
    counts: list[int],
    out_dir: Path,
    perturbation: str,
    difficulty: int,
    seed: int,
    size: int,
    provenance: dict[str, Any] | None,
    *,
    protocol: str,
) -> ClassificationSet:
    """The manifest of the frames written for the sampled `rows` of `clean` (`counts` frames
    each)."""
    spec = perturbations.check(perturbation)
    images = [
        {
            "path": f"{number:06d}/{frame:02d}.png",
            "label": clean.images[row]["label"],
            "sequence": number,
            "frame": frame,
            "source_path": str(Path(clean.root) / clean.images[row]["path"]),
        }
        for (number, row), count in zip(enumerate(rows), counts)
        for frame in range(count)
    ]
    return clean.derived(
        f"{clean.dataset}-p-{perturbation}",
        "perturbation-sequences",
        str(out_dir),
        images,
        {
            "perturbation": perturbation,
            "noise": spec.noise,
            "split": spec.split,
            "frames": spec.frames,
            "difficulty": difficulty,
            "seed": seed,
            "size": size,
            "n_sequences": len(rows),
            "protocol": protocol,
            "clean_kind": clean.kind,  # ImageNet val (kind imagenet) compares with the paper's
        },
        provenance=provenance or {},
    )


def released_video(root: Path, perturbation: str, difficulty: int, entry_path: str) -> Path:
    """Where the released ImageNet-P keeps the video of a val image `<wnid>/<name>.JPEG`:
    `<root>/<perturbation>[_<difficulty>]/<wnid>/<name>.mp4` (noise sets of difficulty 2 and 3
    are their own folders, as `ImageNet-P/test.py` reads them)."""
    spec = perturbations.check(perturbation)
    folder = perturbation if not spec.noise or difficulty == 1 else f"{perturbation}_{difficulty}"
    relative = Path(entry_path)
    return root / folder / relative.parent / f"{relative.stem}.mp4"


def decode_video(path: Path) -> list[np.ndarray]:
    """Every frame of a video file, RGB uint8 (OpenCV's FFmpeg)."""
    import cv2

    from vlstress.errors import VlstressError

    if not path.is_file():
        raise VlstressError(f"ImageNet-P video not found: {path}")
    capture = cv2.VideoCapture(str(path))
    frames = []
    try:
        while True:
            ok, frame = capture.read()
            if not ok:
                break
            frames.append(np.ascontiguousarray(frame[..., ::-1]))
    finally:
        capture.release()
    if len(frames) < 2:
        raise VlstressError(
            f"ImageNet-P video {path}: {len(frames)} frame(s) decoded; a sequence needs at least 2"
        )
    return frames


def read_released(
    clean: ClassificationSet,
    perturbation: str,
    root: Path,
    *,
    n_images: int | None,
    seed: int,
    size: int,
    difficulty: int,
    out_dir: str | Path,
    provenance: dict[str, Any] | None = None,
    progress: bool = True,
) -> ClassificationSet:
    """The released ImageNet-P videos of a seeded sample of `clean` (ImageNet val, `<wnid>/<file>`
    paths), decoded to PNG frames in the same layout as `generate` writes. Frames keep the
    videos' size (224 in the release); `size` is recorded, not applied."""
    from tqdm.auto import tqdm

    perturbations.check(perturbation)
    perturbations.check_difficulty(difficulty)
    rows = sample(len(clean.images), n_images, seed)
    videos = [
        released_video(root, perturbation, difficulty, clean.images[row]["path"]) for row in rows
    ]
    out_dir = Path(out_dir)
    with atomic_dir(out_dir) as tmp:
        counts = []
        for number, video in enumerate(
            tqdm(videos, desc=perturbation, unit="video", disable=not progress)
        ):
            frames = decode_video(video)
            folder = tmp / f"{number:06d}"
            folder.mkdir()
            for index, frame in enumerate(frames):
                save_image(frame, folder / f"{index:02d}.png", "png")
            counts.append(len(frames))
        data = sequence_set(
            clean, rows, counts, out_dir, perturbation, difficulty, seed, size, provenance,
            protocol=f"the released ImageNet-P videos ({root}), decoded to PNG",
        )  # fmt: skip
        write_manifest(tmp / "manifest.json", data)
    return data


def write_sequence(job: Job, item: tuple[int, str, str]) -> int:
    """Write one image's frames; returns their count."""
    index, path, key = item
    frames = perturbations.sequence(
        load_rgb(path),
        job.perturbation,
        size=job.size,
        seed=image_seed(job.seed, job.perturbation, key),
        difficulty=job.difficulty,
    )
    folder = Path(job.out_dir) / f"{index:06d}"
    folder.mkdir()
    for number, frame in enumerate(frames):
        save_image(frame, folder / f"{number:02d}.png", "png")
    return len(frames)


def _run(args: tuple[Job, tuple[int, str, str]]) -> int:
    return write_sequence(*args)


def generate(
    clean: ClassificationSet,
    perturbation: str,
    *,
    n_images: int | None,
    seed: int,
    size: int,
    difficulty: int,
    out_dir: str | Path,
    workers: int = 0,
    provenance: dict[str, Any] | None = None,
    progress: bool = True,
) -> ClassificationSet:
    """The sequences of a seeded sample of `clean` under one perturbation, written to `out_dir`."""
    from tqdm.auto import tqdm

    perturbations.check(perturbation)
    perturbations.check_difficulty(difficulty)
    rows = sample(len(clean.images), n_images, seed)
    items = [
        (number, str(Path(clean.root) / clean.images[row]["path"]), str(clean.images[row]["path"]))
        for number, row in enumerate(rows)
    ]
    out_dir = Path(out_dir)
    with atomic_dir(out_dir) as tmp:
        job = Job(perturbation, size, seed, difficulty, str(tmp))
        workers = min(workers or available_cores(), len(items)) or 1
        bar = tqdm(total=len(items), desc=perturbation, unit="seq", disable=not progress)
        if workers == 1:
            counts = []
            for item in items:
                counts.append(write_sequence(job, item))
                bar.update()
        else:
            with ProcessPoolExecutor(workers) as pool:
                counts = []
                for count in pool.map(_run, [(job, item) for item in items]):
                    counts.append(count)
                    bar.update()
        bar.close()
        data = sequence_set(
            clean,
            rows,
            counts,
            out_dir,
            perturbation,
            difficulty,
            seed,
            size,
            provenance,
            protocol="ImageNet-P (hendrycks/robustness make_imagenet_p.py), PNG frames",
        )
        write_manifest(tmp / "manifest.json", data)
    return data
