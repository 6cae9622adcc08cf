"""Benchmark: ImageNet-P style sequence generation (`vlstress perturbation-sequences`), per
perturbation, on one core, and what a full ImageNet-P regeneration costs.

Input: seeded synthetic 500x375 "photos" (ImageNet's typical size: smooth fields with edges and
texture) written as JPEG with a classification manifest in a temporary folder. For each
perturbation, `vlstress.suites.stability.sequences.generate` with one worker (in process) writes
every frame as PNG; the rate is frames per second of one core, decoding, resizing and writing
included. Then the estimate: ImageNet-P's 10 test perturbations of the 50,000 validation images
(31 frames each, translate 41), in core-hours, and the frames each model embeds.

    python benchmarks/bench_stability.py                  # 4 images per perturbation
    python benchmarks/bench_stability.py --images 16 --out benchmarks/results/bench_stability.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

from vlstress.suites.stability import perturbations, sequences
from vlstress.testsets import manifest as testsets

IMAGENET_VAL = 50_000


def photos(root: Path, n: int) -> testsets.ClassificationSet:
    rng = np.random.default_rng(0)
    y, x = np.mgrid[0:375, 0:500]
    images = []
    for i in range(n):
        field = np.stack([np.sin(x / (20 + 7 * i)), np.cos(y / (15 + 5 * i)), (x + y) / 875], -1)
        pixels = np.clip(0.5 + 0.4 * field + 0.15 * rng.standard_normal(field.shape), 0, 1)
        Image.fromarray((255 * pixels).astype(np.uint8)).save(root / f"{i}.jpg", quality=90)
        images.append({"path": f"{i}.jpg", "label": 0})
    data = testsets.ClassificationSet("bench", "folder", ["x"], ["x"], str(root), images)
    testsets.write(root / "manifest.json", data)
    return data


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=int, default=4, help="sequences per perturbation")
    parser.add_argument("--out", type=Path, default=None, help="JSON result")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import cv2

    cv2.setNumThreads(1)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        clean = photos(Path(tmp), args.images)
        for name, spec in perturbations.PERTURBATIONS.items():
            start = time.perf_counter()
            sequences.generate(
                clean, name, n_images=None, seed=0, size=224, difficulty=1,
                out_dir=Path(tmp) / name, workers=1, progress=False,
            )  # fmt: skip
            seconds = time.perf_counter() - start
            frames = args.images * spec.frames
            results[name] = {"frames": frames, "seconds": seconds, "frames_per_s": frames / seconds}
            print(f"{name:15s} {frames / seconds:7.1f} frames/s (one core)", file=sys.stderr)
    test = [results[name] for name in perturbations.TEST]
    frames_per_image = sum(perturbations.PERTURBATIONS[n].frames for n in perturbations.TEST)
    core_s_per_image = sum(
        perturbations.PERTURBATIONS[n].frames / results[n]["frames_per_s"]
        for n in perturbations.TEST
    )
    estimate = {
        "frames_per_model": IMAGENET_VAL * frames_per_image,
        "generation_core_hours": IMAGENET_VAL * core_s_per_image / 3600,
        "mean_test_frames_per_s": float(np.mean([r["frames_per_s"] for r in test])),
    }
    body = {"images": args.images, "size": 224, "perturbations": results, "imagenet_p": estimate}
    print(json.dumps(estimate, indent=2))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(body, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
