"""Reference check: imagecorruptions-imaug (the port we use) against imagecorruptions==1.1.2.

Does `imagecorruptions.corrupt` of the port give the same bytes as the original package for
each of the 19 corruptions at severities 1-5, given the same input and the same random
draws? The original cannot run in the project's environment (it passes `multichannel=` to
scikit-image's `gaussian`, removed in 0.20), so it runs in a reference venv and its outputs
are dumped to an .npz that the project's venv compares with.

Inputs: the first `--images` (4) photos, sorted by name, of a folder (default: coco-mini),
resized and centre-cropped as `vlstress.suites.corruptions.imagenet_c.resize_center_crop`
does (shorter side 256, centre crop 224, Pillow bilinear; copied here, this file must run
without vlstress). The dump stores its inputs; `compare` and `dump --inputs` reuse them, so
every package sees the same uint8 arrays whatever its Pillow.

Random draws. Before each call numpy's global RandomState is seeded with an integer k
(`np.random.seed(k)`, k distinct per corruption, severity and image). That fixes every draw
of the original except two:
  impulse_noise  skimage.util.random_noise draws from `np.random.default_rng(seed)` (since
                 scikit-image 0.19; before, from numpy's global state); the original passes
                 no seed, so OS entropy. Here random_noise is wrapped to get `seed=k` when the
                 package passes none (the original); the port is called with `seed=k`: the
                 same Generator, default_rng(k), for both.
  glass_blur     the original shuffles pixels with numpy's global state, the port with
                 numba's generator, seeded by `seed=`: numba's np.random.seed/randint
                 reproduce numpy's legacy MT19937 stream, so the port gets `seed=k`.
The project's `corrupt_image` seeds the same generators from a SeedSequence instead, but
the corruption code it runs is this one.

The reference venv (scikit-image 0.19.3, the last with `multichannel=`, has no wheel for
Python 3.11: built from source, about 20 minutes on 2 cores):

    python3.11 -m venv /tmp/icref
    /tmp/icref/bin/pip install --only-binary=:all: numpy==1.24.4 scipy==1.10.1 \
        opencv-python==4.8.1.78 Pillow==9.5.0 setuptools==59.4.0 wheel packaging \
        Cython==0.29.37 pythran==0.12.2
    /tmp/icref/bin/pip install --no-build-isolation --no-binary=scikit-image \
        scikit-image==0.19.3 imagecorruptions==1.1.2 numpy==1.24.4

Run (from the repository root):

    # 1. the original, in the reference venv
    /tmp/icref/bin/python benchmarks/imagecorruptions_reference.py dump --out /tmp/ic-original.npz
    # 2. the port against it, in the project venv (live run of the installed port)
    .venv/bin/python benchmarks/imagecorruptions_reference.py compare --ref /tmp/ic-original.npz
    # optional, to split code from library versions: the port in the reference venv
    /tmp/icref/bin/pip install --only-binary=:all: numba==0.58.1 numpy==1.24.4
    /tmp/icref/bin/pip install --no-deps --target /tmp/icport imagecorruptions-imaug==1.1.5
    PYTHONPATH=/tmp/icport /tmp/icref/bin/python benchmarks/imagecorruptions_reference.py \\
        dump --inputs /tmp/ic-original.npz --out /tmp/ic-port-refenv.npz
    .venv/bin/python benchmarks/imagecorruptions_reference.py compare \\
        --ref /tmp/ic-original.npz --other /tmp/ic-port-refenv.npz        # code only
    .venv/bin/python benchmarks/imagecorruptions_reference.py compare \\
        --ref /tmp/ic-port-refenv.npz                                     # library versions only

Per corruption and severity, over all images: byte-equal, max and mean |diff| in grey
levels (over all channel values), and the fraction of pixels with any channel differing.
glass_blur's original is a pure-Python loop (about 2 s per image and severity at 224x224,
40 s of the dump's 50); `--glass-images` limits it. `--json` writes the table
(benchmarks/results/imagecorruptions_reference.json: step 2 on 4 coco-mini photos).
In the port under the reference venv frost fails (cv2.imread of a Path needs a newer
OpenCV): it is recorded as an error and not compared.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import platform
import sys
import time
import warnings
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_IMAGES = Path("/work/shared/data/coco-mini/images")
# imagecorruptions.get_corruption_names("all"), in its order (checked at run time)
NAMES = [
    "gaussian_noise",
    "shot_noise",
    "impulse_noise",
    "defocus_blur",
    "glass_blur",
    "motion_blur",
    "zoom_blur",
    "snow",
    "frost",
    "fog",
    "brightness",
    "contrast",
    "elastic_transform",
    "pixelate",
    "jpeg_compression",
    "speckle_noise",
    "gaussian_blur",
    "spatter",
    "saturate",
]
SEVERITIES = [1, 2, 3, 4, 5]
DISTRIBUTIONS = [
    "imagecorruptions",
    "imagecorruptions-imaug",
    "numpy",
    "scipy",
    "scikit-image",
    "opencv-python",
    "Pillow",
    "numba",
]


def draw_seed(corruption: int, severity: int, image: int) -> int:
    """The integer numpy's global RandomState is seeded with before one call."""
    return 100_000 + 1000 * corruption + 100 * severity + image


# --- inputs ---------------------------------------------------------------------------------------


def resize_center_crop(image, size: int = 224):
    """vlstress.suites.corruptions.imagenet_c.resize_center_crop (ImageNet-C: 256 then 224)."""
    from PIL import Image

    short = round(256 * size / 224)
    width, height = image.size
    new = (
        (short, int(short * height / width))
        if width <= height
        else (int(short * width / height), short)
    )
    image = image.resize(new, Image.Resampling.BILINEAR if hasattr(Image, "Resampling") else 2)
    left, top = int(round((new[0] - size) / 2.0)), int(round((new[1] - size) / 2.0))
    return image.crop((left, top, left + size, top + size))


def load_inputs(folder: Path, count: int, size: int) -> tuple[np.ndarray, list[str]]:
    from PIL import Image

    files = sorted(p for p in folder.iterdir() if p.suffix.lower() in {".jpg", ".jpeg", ".png"})
    files = files[:count]
    if len(files) < count:
        sys.exit(f"need {count} images in {folder}, found {len(files)}")
    arrays = []
    for path in files:
        with Image.open(path) as img:
            arrays.append(np.asarray(resize_center_crop(img.convert("RGB"), size)))
    return np.stack(arrays), [p.name for p in files]


# --- running the installed package ----------------------------------------------------------------


def versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for dist in DISTRIBUTIONS:
        with contextlib.suppress(metadata.PackageNotFoundError):
            found[dist] = metadata.version(dist)
    return found


def package_info() -> dict[str, str]:
    import imagecorruptions
    from imagecorruptions import corruptions

    names = list(imagecorruptions.get_corruption_names("all"))
    if names != NAMES:
        sys.exit(f"unexpected corruption list {names}")
    port = hasattr(corruptions, "_shuffle_pixels_njit_glass_blur")
    return {"impl": "port" if port else "original", "file": imagecorruptions.__file__}


@contextlib.contextmanager
def skimage_noise_seed(seed: int) -> Iterator[None]:
    """random_noise gets `seed` when its caller passes none (the original's impulse_noise)."""
    import skimage.util

    original = skimage.util.random_noise
    params = inspect.signature(original).parameters
    key = "seed" if "seed" in params else "rng"

    def seeded(image, mode="gaussian", *args, **kwargs):
        if not args and kwargs.get(key) is None:
            kwargs[key] = seed
        return original(image, mode, *args, **kwargs)

    skimage.util.random_noise = seeded
    try:
        yield
    finally:
        skimage.util.random_noise = original


def corrupt_one(image: np.ndarray, name: str, severity: int, seed: int) -> np.ndarray:
    import imagecorruptions
    from imagecorruptions import corruptions

    kwargs = {}
    if "seed" in inspect.signature(getattr(corruptions, name)).parameters:
        kwargs["seed"] = seed  # the port: impulse_noise (skimage), glass_blur (numba)
    np.random.seed(seed)
    with skimage_noise_seed(seed):
        out = imagecorruptions.corrupt(image, severity=severity, corruption_name=name, **kwargs)
    return np.asarray(out, dtype=np.uint8)


def run_all(inputs: np.ndarray, glass_images: int) -> tuple[np.ndarray, np.ndarray, dict]:
    """outputs[c, s, i], done[c, s, i] (glass_blur may skip images, a failing corruption
    has none), seconds per corruption and errors."""
    outputs = np.zeros((len(NAMES), len(SEVERITIES), *inputs.shape), np.uint8)
    done = np.zeros((len(NAMES), len(SEVERITIES), len(inputs)), bool)
    seconds, errors = {}, {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the original's deprecation warnings
        for c, name in enumerate(NAMES):
            count = min(glass_images, len(inputs)) if name == "glass_blur" else len(inputs)
            start = time.perf_counter()
            try:
                for s, severity in enumerate(SEVERITIES):
                    for i in range(count):
                        seed = draw_seed(c, severity, i)
                        outputs[c, s, i] = corrupt_one(inputs[i], name, severity, seed)
                        done[c, s, i] = True
            except Exception as exc:  # a package/library mismatch: recorded, not compared
                errors[name] = f"{type(exc).__name__}: {exc}"
                done[c] = False
            seconds[name] = round(time.perf_counter() - start, 2)
            print(f"{name:18s} {seconds[name]:7.2f} s {errors.get(name, '')}", file=sys.stderr)
    return outputs, done, {"seconds": seconds, "errors": errors}


# --- modes ----------------------------------------------------------------------------------------


def dump(args: argparse.Namespace) -> None:
    if args.inputs:
        with np.load(args.inputs) as ref:
            inputs, files = ref["inputs"], json.loads(str(ref["meta"]))["files"]
    else:
        inputs, files = load_inputs(args.image_dir, args.images, args.size)
    info = package_info()
    outputs, done, timing = run_all(inputs, args.glass_images)
    meta = {"files": files, "versions": versions(), **timing, **info}
    np.savez_compressed(args.out, inputs=inputs, outputs=outputs, done=done, meta=json.dumps(meta))
    print(json.dumps(meta, indent=1))


def diff_stats(a: np.ndarray, b: np.ndarray) -> dict:
    diff = np.abs(a.astype(np.int16) - b.astype(np.int16))
    if not diff.size:  # nothing to compare (a corruption failed in one of the two)
        return {"equal": None, "equal_images": 0, "max": None, "mean": None, "pixels": None}
    return {
        "equal": bool(not diff.any()),
        "equal_images": int((diff.reshape(len(diff), -1).max(axis=1) == 0).sum()),
        "max": int(diff.max()),
        "mean": float(diff.mean()),
        "pixels": float(diff.any(axis=-1).mean()),
    }


def compare(args: argparse.Namespace) -> None:
    with np.load(args.ref) as ref:
        inputs, outputs, done = ref["inputs"], ref["outputs"], ref["done"]
        meta = json.loads(str(ref["meta"]))
    if args.other:
        with np.load(args.other) as other_file:
            other, other_done = other_file["outputs"], other_file["done"]
            other_meta = json.loads(str(other_file["meta"]))
            if not np.array_equal(other_file["inputs"], inputs):
                sys.exit("the two dumps have different inputs")
    else:
        glass = int(done[NAMES.index("glass_blur"), 0].sum())
        other_meta = {**package_info(), "versions": versions()}
        other, other_done, timing = run_all(inputs, glass)
        other_meta.update(timing)
        with contextlib.suppress(OSError):  # how this env's Pillow loads the same files
            mine, _ = load_inputs(args.image_dir, len(inputs), inputs.shape[1])
            print(f"inputs reloaded with this env's Pillow: {diff_stats(mine, inputs)}")
    print(f"ref:   {meta['impl']:8s} {meta['versions']} errors: {meta.get('errors')}")
    print(f"other: {other_meta['impl']:8s} {other_meta['versions']} errors: {other_meta['errors']}")
    rows = []
    # equal: images byte-equal / compared; max, mean: |diff| in grey levels over all channel
    # values; pixels: fraction of pixels with any channel differing
    print(f"{'corruption':18s} sev equal  max      mean    pixels")
    for c, name in enumerate(NAMES):
        for s, severity in enumerate(SEVERITIES):
            both = done[c, s] & other_done[c, s]
            stats = diff_stats(outputs[c, s][both], other[c, s][both])
            rows.append({"corruption": name, "severity": severity, "images": int(both.sum())})
            rows[-1].update(stats)
            line = f"{name:18s} {severity:3d} {stats['equal_images']:2d}/{int(both.sum()):<2d}"
            if stats["equal"] is None:
                print(f"{line}  not compared")
            else:
                print(f"{line} {stats['max']:4d} {stats['mean']:9.6f} {stats['pixels']:9.6f}")
    c = NAMES.index("frost")  # original: randint(5) pictures, port: randint(6)
    picks = [
        (severity, i, np.random.RandomState(k).randint(5), np.random.RandomState(k).randint(6))
        for severity in SEVERITIES
        for i in range(len(inputs))
        for k in [draw_seed(c, severity, i)]
    ]
    differ = [(s, i, a, b) for s, i, a, b in picks if a != b]
    print(
        f"frost: picture randint(5) != randint(6) for {len(differ)}/{len(picks)} seeds "
        f"(severity, image, original, port): {differ}"
    )
    unequal = [
        (severity, i)
        for s, severity in enumerate(SEVERITIES)
        for i in range(len(inputs))
        if done[c, s, i]
        and other_done[c, s, i]
        and not np.array_equal(outputs[c, s, i], other[c, s, i])
    ]
    print(f"frost: outputs differ for (severity, image) {unequal}")
    if args.json:
        result = {"ref": meta, "other": other_meta, "rows": rows}
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    d = sub.add_parser("dump", help="run the installed imagecorruptions, write an .npz")
    d.add_argument("--out", type=Path, required=True)
    d.add_argument("--inputs", type=Path, help="reuse the inputs of an earlier dump")
    d.add_argument("--images", type=int, default=4)
    d.add_argument("--size", type=int, default=224)
    d.add_argument("--glass-images", type=int, default=4)
    c = sub.add_parser("compare", help="compare a dump with the installed package or a dump")
    c.add_argument("--ref", type=Path, required=True)
    c.add_argument("--other", type=Path, help="a second dump instead of a live run")
    c.add_argument("--json", type=Path)
    for p in (d, c):
        p.add_argument("--image-dir", type=Path, default=DEFAULT_IMAGES)
    args = parser.parse_args()
    dump(args) if args.mode == "dump" else compare(args)


if __name__ == "__main__":
    main()
