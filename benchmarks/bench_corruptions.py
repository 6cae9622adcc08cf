"""Benchmark: corrupted-set generation vs a serial loop.

The generation is `vlstress.suites.corruptions.imagenet_c.generate` (what `vlstress corrupt` runs).

Input: seeded synthetic 224x224 "photos" (smooth random fields with edges and texture),
written as PNG files with a classification manifest in a temporary folder. For every
corruption and all 5 severities, in the same run, one after the other:

- plain loop:  for each image: PIL load, imagecorruptions.corrupt at each severity (numpy's
               global RNG, unseeded), PNG save: the obvious serial script;
- generate x1: vlstress generate with 1 worker (in-process; seeded per image, PNG);
- generate xN: vlstress generate with every core (spawned process pool, chunks of images).
               Its wall time includes starting the pool (spawn, imports, numba compile):
               that start-up is measured alone (a run of one image per worker at one
               severity) and the steady rate excludes it; both are reported.

OpenCV is held to one thread in every path (the pool runs one process per core), so
"plain loop" and "generate x1" are both one core. Rates are corrupted images per second
(image x severity). numba compiles glass_blur once per process: the serial paths are
warmed up first, the pool pays it in its start-up.

Then an estimate of a full ImageNet-C regeneration (50,000 validation images x 15
corruptions x 5 severities at 224x224) on a `--node-cores` node: per corruption, the
one-core rate of `generate x1` (measured here for every one of the 15; in quick mode the
ones outside the comparison on `--estimate-images` images) gives core-seconds, divided by
node cores x the parallel efficiency measured here (all-core rate / (cores x one-core rate)).
Decoding and resizing ImageNet's JPEGs (~500x375) is not in it (once per image, shared by
5 severities).

    python benchmarks/bench_corruptions.py           # quick: 5 representative corruptions
    python benchmarks/bench_corruptions.py --full    # all 19
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
# noise, the two slow blurs, weather, digital
QUICK = [
    "gaussian_noise",
    "glass_blur",
    "zoom_blur",
    "frost",
    "jpeg_compression",
]
SEVERITIES = [1, 2, 3, 4, 5]
IMAGENET_VAL = 50_000


def synthetic_set(folder: Path, n: int, size: int, seed: int):
    """n seeded smooth images with some texture, as PNG files + a ClassificationSet over them."""
    from PIL import Image

    from vlstress.testsets.manifest import ClassificationSet

    rng = np.random.default_rng(seed)
    (folder / "images").mkdir(parents=True)
    images = []
    for i in range(n):
        coarse = Image.fromarray((rng.random((6, 6, 3)) * 255).astype(np.uint8)).resize(
            (size, size), Image.BICUBIC
        )
        texture = rng.normal(0, 12, (size, size, 3))
        pixels = np.clip(np.asarray(coarse, float) + texture, 0, 255).astype(np.uint8)
        Image.fromarray(pixels).save(folder / "images" / f"{i}.png")
        images.append({"path": f"images/{i}.png", "label": i % 10})
    classes = [f"class{k}" for k in range(10)]
    return ClassificationSet(
        dataset="synthetic",
        kind="bench",
        classes=classes,
        class_ids=classes,
        root=str(folder),
        images=images,
    )


def plain_loop(clean, name: str, out: Path) -> float:
    """The obvious serial script; returns seconds."""
    import imagecorruptions
    from PIL import Image

    out.mkdir()
    start = time.perf_counter()
    for index, path in enumerate(clean.image_paths()):
        image = np.asarray(Image.open(path).convert("RGB"))
        for severity in SEVERITIES:
            corrupted = imagecorruptions.corrupt(image, severity=severity, corruption_name=name)
            Image.fromarray(corrupted).save(out / f"{severity}_{index}.png")
    return time.perf_counter() - start


def timed_generate(
    clean, name: str, out: Path, workers: int, chunk_size: int, severities=SEVERITIES
) -> float:
    from vlstress.suites.corruptions.imagenet_c import generate

    start = time.perf_counter()
    generate(
        clean,
        name,
        severities,
        0,
        out,
        size=0,
        workers=workers,
        chunk_size=chunk_size,
        progress=False,
    )
    return time.perf_counter() - start


def warm_up(name: str) -> None:
    from vlstress.suites.corruptions.imagenet_c import corrupt_image

    corrupt_image(np.zeros((224, 224, 3), np.uint8), name, 1, 0)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--full", action="store_true", help="all 19 corruptions (default: 5 representative ones)"
    )
    parser.add_argument(
        "--images", type=int, default=32, help="synthetic images per corruption (x 5 severities)"
    )
    parser.add_argument(
        "--estimate-images",
        type=int,
        default=8,
        help="quick mode: images for the one-core rate of the other ImageNet-C corruptions",
    )
    parser.add_argument("--size", type=int, default=224)
    parser.add_argument(
        "--workers", type=int, default=0, help="all-core path (0 = every core this process may use)"
    )
    parser.add_argument(
        "--chunk-size", type=int, default=None, help="default: images / (4 x workers), at least 1"
    )
    parser.add_argument(
        "--node-cores", type=int, default=16, help="node of the ImageNet-C estimate"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks" / "results" / "corruptions.json"
    )
    args = parser.parse_args(argv)

    import cv2

    from vlstress import provenance
    from vlstress.io import write_json
    from vlstress.suites.corruptions.imagenet_c import (
        CORRUPTIONS,
        IMAGENET_C,
        available_cores,
    )

    cv2.setNumThreads(1)
    cores = args.workers or available_cores()
    chunk = args.chunk_size or max(1, args.images // (4 * cores))
    names = list(CORRUPTIONS) if args.full else QUICK
    per_set = args.images * len(SEVERITIES)
    rows: dict[str, dict] = {}
    line = "{:<19}{:>8}{:>8}{:>8}{:>10}{:>9}{:>11}{:>10}{:>10}"
    print(
        f"{args.images} synthetic {args.size}x{args.size} images x {len(SEVERITIES)} "
        f"severities per corruption; {cores} cores, chunks of {chunk}"
    )
    print("rates in corrupted images/s; xN wall includes the pool start-up, xN steady excludes it")
    print(
        line.format(
            "corruption",
            "family",
            "plain",
            "gen x1",
            f"x{cores} wall",
            "start s",
            f"x{cores} steady",
            "x1/plain",
            f"x{cores}/plain",
        )
    )
    if args.workdir is not None:
        args.workdir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=args.workdir, prefix="bench_corruptions.") as tmp:
        tmp = Path(tmp)
        clean = synthetic_set(tmp / "clean", args.images, args.size, args.seed)
        # one image per worker: the pool's start-up
        tiny = synthetic_set(tmp / "tiny", cores, args.size, args.seed + 2)
        for name in names:
            warm_up(name)
            plain = plain_loop(clean, name, tmp / f"{name}.plain")
            one = timed_generate(clean, name, tmp / f"{name}.x1", 1, chunk)
            many = timed_generate(clean, name, tmp / f"{name}.xN", cores, chunk)
            # minus ~one image's work
            startup = (
                timed_generate(tiny, name, tmp / f"{name}.startup", cores, 1, [1]) - one / per_set
            )
            rows[name] = {
                "family": CORRUPTIONS[name],
                "plain_img_s": per_set / plain,
                "one_core_img_s": per_set / one,
                "all_cores_wall_img_s": per_set / many,
                "pool_startup_s": startup,
                "all_cores_img_s": per_set / max(many - startup, 1e-9),
            }
            r = rows[name]
            print(
                line.format(
                    name,
                    r["family"],
                    f"{r['plain_img_s']:.1f}",
                    f"{r['one_core_img_s']:.1f}",
                    f"{r['all_cores_wall_img_s']:.1f}",
                    f"{startup:.1f}",
                    f"{r['all_cores_img_s']:.1f}",
                    f"{r['one_core_img_s'] / r['plain_img_s']:.2f}",
                    f"{r['all_cores_img_s'] / r['plain_img_s']:.2f}",
                )
            )
        # one-core rates of the ImageNet-C corruptions outside the comparison
        small = synthetic_set(tmp / "small", args.estimate_images, args.size, args.seed + 1)
        extra = {}
        for name in (n for n in IMAGENET_C if n not in rows):
            warm_up(name)
            extra[name] = (
                args.estimate_images
                * len(SEVERITIES)
                / timed_generate(small, name, tmp / f"{name}.est", 1, chunk)
            )

    efficiency = min(
        1.0,
        float(
            np.mean([r["all_cores_img_s"] / (cores * r["one_core_img_s"]) for r in rows.values()])
        ),
    )
    one_core = {n: (rows[n]["one_core_img_s"] if n in rows else extra[n]) for n in IMAGENET_C}
    core_seconds = {n: IMAGENET_VAL * len(SEVERITIES) / rate for n, rate in one_core.items()}
    total = sum(core_seconds.values())
    node_hours = total / (args.node_cores * efficiency) / 3600
    slowest = sorted(core_seconds, key=core_seconds.get, reverse=True)
    print(
        f"\nparallel efficiency on {cores} cores, steady (mean over the compared corruptions): "
        f"{efficiency:.2f}"
    )
    print(
        f"ImageNet-C regeneration ({IMAGENET_VAL} images x 15 corruptions x 5 severities "
        f"at {args.size}px):"
    )
    for name in slowest:
        print(
            f"  {name:<19}{one_core[name]:>8.1f} img/s/core "
            f"{core_seconds[name] / 3600:>7.2f} core-hours ({core_seconds[name] / total:>5.1%})"
        )
    print(
        f"  total {total / 3600:.1f} core-hours -> {node_hours:.2f} h on a "
        f"{args.node_cores}-core node (efficiency {efficiency:.2f}); "
        f"slowest: {slowest[0]} ({core_seconds[slowest[0]] / total:.0%}), "
        f"{slowest[1]} ({core_seconds[slowest[1]] / total:.0%})"
    )
    result = {
        "benchmark": "corruption-generation",
        "images": args.images,
        "size": args.size,
        "severities": SEVERITIES,
        "cores": cores,
        "chunk_size": chunk,
        "rates": {
            n: {k: (round(v, 2) if isinstance(v, float) else v) for k, v in r.items()}
            for n, r in rows.items()
        },
        "parallel_efficiency": round(efficiency, 3),
        "imagenet_c_estimate": {
            "one_core_img_s": {n: round(v, 2) for n, v in one_core.items()},
            "core_hours": round(total / 3600, 2),
            "node_cores": args.node_cores,
            "node_hours": round(node_hours, 2),
            "estimate_images": {
                n: (args.images if n in rows else args.estimate_images) for n in IMAGENET_C
            },
        },
        "cpu_count": os.cpu_count(),
        "provenance": provenance.build(
            "bench-corruptions",
            {
                k: (str(v) if isinstance(v, Path) else v)
                for k, v in vars(args).items()
                if k not in ("out", "workdir")
            },
            seed=args.seed,
            device="cpu",
        ),
    }
    write_json(args.out, result)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
