"""ImageNet-C style corruptions (imagecorruptions-imaug), seeded per image, and corrupted test sets.

The 19 corruptions of `imagecorruptions` (15 ImageNet-C + 4 extra, the "validation" ones
of Hendrycks & Dietterich) are applied with the library's own code; this module only makes
them reproducible and runs them over a classification manifest. The library is a port of
make_imagenet_c.py, not a copy: motion_blur (and snow's streaks) use a numpy shift-and-add
kernel instead of ImageMagick's, elastic_transform has no random affine and other
constants, pixelate upsamples NEAREST (original: BOX), frost picks among 6 pictures (original: 5),
glass_blur's pixel shuffle is numba (the original pure-Python loop made it the slowest by far), and
all accept any size. Regenerated sets are ImageNet-C-like, not the released files.

Randomness. imagecorruptions draws from three generators, none seeded by the library:
  numpy's global RandomState  gaussian/shot/speckle noise, motion_blur (angle), snow, frost
                              (which frost picture, where), fog (plasma fractal), spatter,
                              elastic_transform;
  skimage random_noise(rng)   impulse_noise: a fresh OS-seeded Generator unless `seed` is given;
  numba's own RNG             glass_blur: np.random.seed/randint inside an @njit function (numba
                              keeps its own state, untouched by numpy's); OS-seeded unless `seed`.
The others (blurs, contrast, brightness, saturate, pixelate, jpeg) are deterministic.
`corrupt_image` seeds all three from one integer and restores numpy's global state after
the call, so a call gives the same bytes whatever ran before and leaves no trace.

Seeds per image. Image i of a set gets `image_seed(seed, name, path)`: a hash of the set
seed, the corruption and the image's manifest path, so its corruption does not depend on
the order of the manifest, on subsets, on workers or chunks. The severity is not part of
it: all severities of one image share their random draws (common random numbers: the
same noise field, frost crop, blur angle, only scaled), so differences between severities
measure the strength, not a new draw. ImageNet-C drew independently per severity; on
average over a test set both give the same expected accuracy.

Sizes (`size`). ImageNet-C corrupts the 224x224 centre crop after resizing the shorter side
to 256 (torchvision Resize(256) + CenterCrop(224), bilinear). `size=224` (the default of
the commands) does exactly that; another `size` scales it (shorter side to
round(256 * size / 224), centre crop size x size); `size=0` corrupts the original image.
The severity constants of imagecorruptions are tuned for 224 pixels: blur radii, fog
scale, frost crops and glass_blur's pixel shuffles are in pixels, so on larger images a
corruption is relatively milder (and glass_blur, linear in pixels, slower). Both sides
must be >= 32 (the library's limit).

Files. PNG, lossless (zlib level 6; PNG and zlib are deterministic, so reruns are
byte-identical): the only degradation is the named corruption. ImageNet-C itself was saved
as JPEG quality 85, which adds compression artefacts on top (notably to the noises);
`fmt="jpeg"` reproduces that (also deterministic for a given libjpeg).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, UnidentifiedImageError

from vlstress.errors import VlstressError
from vlstress.io import atomic_dir
from vlstress.testsets import imagenet_c as imagenet_c_shape
from vlstress.testsets.imagenet_c import SEVERITIES
from vlstress.testsets.manifest import ClassificationSet
from vlstress.testsets.manifest import write as write_manifest

# name -> family, in imagecorruptions' order (a test checks it against get_corruption_names):
# written out so that `--help` and argument checks need not import the library (numba, cv2).
CORRUPTIONS: dict[str, str] = {
    "gaussian_noise": "noise",
    "shot_noise": "noise",
    "impulse_noise": "noise",
    "defocus_blur": "blur",
    "glass_blur": "blur",
    "motion_blur": "blur",
    "zoom_blur": "blur",
    "snow": "weather",
    "frost": "weather",
    "fog": "weather",
    "brightness": "weather",  # as ImageNet-C (sunlight), not digital
    "contrast": "digital",
    "elastic_transform": "digital",
    "pixelate": "digital",
    "jpeg_compression": "digital",
    "speckle_noise": "extra",
    "gaussian_blur": "extra",
    "spatter": "extra",
    "saturate": "extra",
}
# the 15 of ImageNet-C (a list, as imagecorruptions names them): those not "extra" above
IMAGENET_C = list(imagenet_c_shape.IMAGENET_C)
DEFAULT_SIZE = imagenet_c_shape.SIZE
MIN_SIDE = 32  # imagecorruptions refuses smaller images
FORMATS: dict[str, tuple[str, dict[str, Any]]] = {
    "png": (".png", {"format": "PNG", "compress_level": 6}),
    "jpeg": (".jpg", {"format": "JPEG", "quality": 85, "optimize": True}),  # as ImageNet-C's files
}
_SEEDED_BY_ARGUMENT = {
    "impulse_noise",
    "glass_blur",
}  # take `seed=`; the others use numpy's global state


def check_corruption(name: str, severity: int | None = None) -> None:
    if name not in CORRUPTIONS:
        raise VlstressError(f"unknown corruption {name!r}; known: {', '.join(CORRUPTIONS)}")
    if severity is not None and severity not in SEVERITIES:
        raise VlstressError(f"corruption severity must be 1..5, got {severity!r}")


# --- one image ----------------------------------------------------------------------------------


def corrupt_image(image: np.ndarray, name: str, severity: int, seed: int) -> np.ndarray:
    """`name` at `severity` on a uint8 HxWx3 image; same (image, name, severity, seed) -> same
    bytes.

    Seeds numpy's global RandomState, skimage's and numba's generators from `seed` (see the
    module docstring) and restores numpy's global state afterwards.
    """
    import imagecorruptions

    check_corruption(name, severity)
    global_seq, skimage_seq, numba_seq = np.random.SeedSequence(seed).spawn(3)
    kwargs: dict[str, Any] = {}
    if name == "impulse_noise":
        kwargs["seed"] = np.random.default_rng(skimage_seq)  # skimage random_noise(rng=...)
    elif name == "glass_blur":
        # numba's np.random.seed takes a uint32
        kwargs["seed"] = int(numba_seq.generate_state(1)[0])
    saved = np.random.get_state()
    np.random.set_state(np.random.RandomState(np.random.MT19937(global_seq)).get_state())
    try:
        out = imagecorruptions.corrupt(image, severity=severity, corruption_name=name, **kwargs)
    finally:
        np.random.set_state(saved)
    return np.ascontiguousarray(out, dtype=np.uint8)


def image_seed(seed: int, name: str, key: str) -> int:
    """The seed of one image of a set: hash of (set seed, corruption, the image's manifest path)."""
    digest = hashlib.sha256(f"{seed}\0{name}\0{key}".encode()).digest()
    return int.from_bytes(digest[:16], "little")


# --- loading and the ImageNet-C resize policy -----------------------------------------------------


def load_rgb(path: str | Path) -> Image.Image:
    """RGB image, or a VlstressError naming the file (torch-free: runs in light worker
    processes)."""
    try:
        with Image.open(path) as img:
            return img.convert("RGB")
    except FileNotFoundError:
        raise VlstressError(f"image not found: {path}") from None
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        raise VlstressError(f"image is corrupt or unreadable: {path} ({exc})") from None


def check_size(size: int) -> None:
    if size != 0 and size < MIN_SIDE:
        raise VlstressError(f"size must be 0 (original size) or >= {MIN_SIDE}, got {size}")


def resize_center_crop(image: Image.Image, size: int) -> Image.Image:
    """ImageNet-C's preprocessing scaled to `size`: shorter side to round(256*size/224), centre
    crop.

    As torchvision Resize(256) + CenterCrop(224) on a PIL image (bilinear, antialiased);
    size 0 returns the image unchanged.
    """
    if size == 0:
        return image
    short = round(256 * size / 224)
    width, height = image.size
    new = (
        (short, int(short * height / width))
        if width <= height
        else (int(short * width / height), short)
    )
    image = image.resize(new, Image.Resampling.BILINEAR)
    left, top = int(round((new[0] - size) / 2.0)), int(round((new[1] - size) / 2.0))
    return image.crop((left, top, left + size, top + size))


def save_image(array: np.ndarray, path: Path, fmt: str) -> None:
    """Deterministic file: fixed encoder settings, no metadata."""
    Image.fromarray(array).save(path, **FORMATS[fmt][1])


# --- a corrupted set ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Job:
    """What every worker needs besides its chunk of images (picklable, for spawned processes)."""

    name: str
    severities: tuple[int, ...]
    seed: int
    size: int
    fmt: str
    out_dir: str


def file_name(index: int, fmt: str) -> str:
    return f"{index:06d}{FORMATS[fmt][0]}"


def corrupt_chunk(job: Job, chunk: Sequence[tuple[int, str, str]]) -> int:
    """Corrupt images (index, source file, manifest path) at every severity; returns files
    written."""
    for index, source, key in chunk:
        array = np.asarray(resize_center_crop(load_rgb(source), job.size))
        seed = image_seed(job.seed, job.name, key)
        for severity in job.severities:
            try:
                out = corrupt_image(array, job.name, severity, seed)
            except (AttributeError, ValueError) as exc:  # imagecorruptions' input checks
                raise VlstressError(
                    f"cannot corrupt image {source} ({array.shape[1]}x{array.shape[0]}): {exc}"
                ) from None
            save_image(out, Path(job.out_dir) / f"s{severity}" / file_name(index, job.fmt), job.fmt)
    return len(chunk) * len(job.severities)


def init_worker(name: str) -> None:
    """One OpenCV thread per worker process (the pool already uses every core); compile numba's code
    once."""
    import cv2

    cv2.setNumThreads(1)
    if name == "glass_blur":  # numba compiles the pixel shuffle on first use (seconds)
        corrupt_image(np.zeros((MIN_SIDE, MIN_SIDE, 3), np.uint8), name, 1, 0)


@contextlib.contextmanager
def with_single_cv2_thread() -> Iterator[None]:
    import cv2

    before = cv2.getNumThreads()
    cv2.setNumThreads(1)
    try:
        yield
    finally:
        cv2.setNumThreads(before)


def available_cores() -> int:
    return (
        len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    )


def run_chunks(
    job: Job,
    chunks: list[list[tuple[int, str, str]]],
    workers: int,
    progress: Callable[[int], None],
) -> None:
    """Run corrupt_chunk over chunks: in this process (1 worker) or a spawned process pool."""
    if workers == 1:
        with with_single_cv2_thread():
            for chunk in chunks:
                progress(corrupt_chunk(job, chunk))
        return
    import multiprocessing

    # spawn, not fork: the parent may hold torch/OpenMP threads, which forked children inherit badly
    pool = ProcessPoolExecutor(
        workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=init_worker,
        initargs=(job.name,),
    )
    try:
        pending = {pool.submit(corrupt_chunk, job, chunk) for chunk in chunks}
        while pending:
            done, pending = wait(pending, return_when=FIRST_EXCEPTION)
            for future in done:
                # re-raises a worker's error (VlstressError naming the image)
                progress(future.result())
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def generate(
    clean: ClassificationSet,
    name: str,
    severities: Sequence[int],
    seed: int,
    out_dir: str | Path,
    *,
    size: int = DEFAULT_SIZE,
    fmt: str = "png",
    workers: int = 0,
    chunk_size: int = 64,
    provenance: dict[str, Any] | None = None,
    progress: bool = True,
) -> ClassificationSet:
    """Write out_dir/s<severity>/<index>.png for every image and severity, and
    out_dir/manifest.json.

    All or nothing: files are written in a temporary folder that replaces out_dir only when
    every image succeeded. `workers=0` uses every core this process may run on. The files do
    not depend on `workers` or `chunk_size`.
    """
    from tqdm.auto import tqdm

    for severity in severities:
        check_corruption(name, severity)
    if not severities or len(set(severities)) != len(severities):
        raise VlstressError(f"severities must be distinct values in 1..5, got {list(severities)}")
    check_size(size)
    if fmt not in FORMATS:
        raise VlstressError(f"unknown image format {fmt!r}; known: {', '.join(FORMATS)}")
    if chunk_size < 1 or workers < 0:
        raise VlstressError(
            f"chunk size must be >= 1 and workers >= 0, got {chunk_size} and {workers}"
        )
    items = [
        (index, str(Path(clean.root) / entry["path"]), str(entry["path"]))
        for index, entry in enumerate(clean.images)
    ]
    chunks = [items[start : start + chunk_size] for start in range(0, len(items), chunk_size)]
    workers = min(workers or available_cores(), len(chunks)) or 1
    out_dir = Path(out_dir)
    with atomic_dir(out_dir) as tmp:
        for severity in severities:
            (tmp / f"s{severity}").mkdir()
        job = Job(name, tuple(severities), seed, size, fmt, str(tmp))
        with tqdm(
            total=len(items) * len(severities), desc=name, unit="img", disable=not progress
        ) as bar:
            run_chunks(job, chunks, workers, bar.update)
        data = corrupted_set(clean, job, out_dir, provenance or {})
        write_manifest(tmp / "manifest.json", data)  # checks it too
    return data


RELEASED_KINDS = ("imagenet",)  # clean sets whose entries are ImageNet val's <wnid>/<file>


def read_released(
    clean: ClassificationSet,
    name: str,
    severities: Sequence[int],
    released: str | Path,
    out_dir: str | Path,
    provenance: dict[str, Any] | None = None,
) -> ClassificationSet:
    """The released ImageNet-C files of `clean`'s images (ImageNet val, `<wnid>/<file>`), read in
    place: out_dir/manifest.json lists `<released>/<name>/<severity>/<wnid>/<file>` for every image
    and severity (root = `<released>/<name>`), so the corrupted set is embedded and scored as a
    generated one. The clean set must be of kind imagenet; a missing file is named and leaves no
    output."""
    for severity in severities:
        check_corruption(name, severity)
    if not severities or len(set(severities)) != len(severities):
        raise VlstressError(f"severities must be distinct values in 1..5, got {list(severities)}")
    if clean.kind not in RELEASED_KINDS:
        raise VlstressError(
            f"released ImageNet-C {released}: the corrupted test set {clean.dataset} is of kind "
            f"{clean.kind}, not ImageNet val (kind imagenet): the released files are ImageNet val's"
        )
    root = Path(released) / name
    images = [
        {
            "path": f"{severity}/{entry['path']}",
            "label": entry["label"],
            "severity": severity,
            "source_path": str(Path(clean.root) / entry["path"]),
        }
        for severity in severities
        for entry in clean.images
    ]
    missing = [e["path"] for e in images if not (root / e["path"]).is_file()]
    if missing:
        raise VlstressError(
            f"released ImageNet-C {root}: {len(missing)} of {len(images)} files of "
            f"{clean.dataset} are missing: {', '.join(missing[:3])}"
            + (", ..." if len(missing) > 3 else "")
        )
    data = clean.derived(
        f"{clean.dataset}-c-{name}",
        "corruption",
        str(root),
        images,
        {
            "corruption": name,
            "family": CORRUPTIONS[name],
            "severities": list(severities),
            "released": str(Path(released)),
            "format": "jpeg (the released ImageNet-C files)",
        },
        provenance=provenance,
    )
    with atomic_dir(Path(out_dir)) as tmp:
        write_manifest(tmp / "manifest.json", data)  # checks it too
    return data


def corrupted_set(
    clean: ClassificationSet, job: Job, out_dir: Path, provenance: dict[str, Any]
) -> ClassificationSet:
    """The manifest of the corrupted set: one entry per (severity, image), severity-major."""
    images = [
        {
            "path": f"s{severity}/{file_name(index, job.fmt)}",
            "label": entry["label"],
            "severity": severity,
            "source_path": str(Path(clean.root) / entry["path"]),
        }
        for severity in job.severities
        for index, entry in enumerate(clean.images)
    ]
    return clean.derived(
        f"{clean.dataset}-c-{job.name}",
        "corruption",
        str(out_dir),
        images,
        {
            "corruption": job.name,
            "family": CORRUPTIONS[job.name],
            "severities": list(job.severities),
            "seed": job.seed,
            "size": job.size,
            "format": job.fmt,
            "library": "imagecorruptions-imaug",
        },
        provenance=provenance,
    )


# --- as an image perturbation of the retrieval suite (vlstress.images.variants) ------------------


def as_perturbation(name: str, severity: int) -> Callable[..., Any]:
    """`apply(image, partner, lam, box)` for variants.PERTURBATIONS: corrupt a channels-first float
    image.

    For the faithful mode (C x H x W float in [0, 1], a torch tensor or numpy array):
    quantised like torchvision.save_image, corrupted, back to [0, 1] in the input's type.
    lam, partner and box are ignored. The seed is a hash of the quantised pixels, so an
    image gets the same corruption whatever its index or the run (the perturbation API
    passes no index). Not for the clean mode, whose tensors are already normalised.
    """
    check_corruption(name, severity)

    def apply(image, partner=None, lam: float = 1.0, box=None):
        array = image.detach().cpu().numpy() if hasattr(image, "detach") else np.asarray(image)
        pixels = np.clip(array * 255 + 0.5, 0, 255).astype(np.uint8).transpose(1, 2, 0)
        seed = int.from_bytes(
            hashlib.sha256(pixels.tobytes() + name.encode()).digest()[:16], "little"
        )
        out = corrupt_image(np.ascontiguousarray(pixels), name, severity, seed).transpose(
            2, 0, 1
        ) / np.float32(255)
        if hasattr(image, "detach"):
            import torch

            return torch.from_numpy(out.astype(np.float32)).to(image.device, image.dtype)
        return out.astype(array.dtype)

    return apply
