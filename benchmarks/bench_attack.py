"""Benchmark: cost of an adversarial attack on a zero-shot classifier (`vlstress attack`'s path).

Times, in the same run and on the same images, the clean zero-shot evaluation in pixel space
(one forward pass per image: the baseline) and an attack of the registry through
`vlstress.suites.adversarial.attacks.run_attack` (default PGD-10, L-inf eps 4/255), and reports
seconds per 1000 images and the cost of the attack in clean-evaluation units. Speed does not
depend on the weights, so the default is a seeded random-init ViT-B-32 with a random
100-class classifier on synthetic 224 x 224 images.

    python benchmarks/bench_attack.py --images 32            # CPU
    python benchmarks/bench_attack.py --images 1000 --device cuda
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]


def timed(fn, device: str):
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    start = time.perf_counter()
    out = fn()
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return out, time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=32)
    parser.add_argument("--classes", type=int, default=100)
    parser.add_argument("--arch", default="ViT-B-32")
    parser.add_argument("--kind", default="pgd")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--eps", type=float, default=4.0, help="1/255 units")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="default: benchmarks/results/bench_attack[-<device>].json",
    )
    args = parser.parse_args(argv)

    from vlstress import provenance
    from vlstress.embedding import models
    from vlstress.io import write_json
    from vlstress.suites.adversarial import attacks as adversarial

    if args.threads:
        torch.set_num_threads(args.threads)
    device = models.resolve_device(args.device)
    spec = models.ModelSpec(slug=args.arch.lower(), arch=args.arch, pretrained=None, seed=args.seed)
    model, preprocess, _ = models.load(spec, device)
    _, mean, std = adversarial.pixel_pipeline(preprocess)
    size = int(
        model.visual.image_size[0]
        if isinstance(model.visual.image_size, (tuple, list))
        else model.visual.image_size
    )
    rng = np.random.default_rng(args.seed)
    weights = rng.normal(size=(args.classes, model.visual.output_dim)).astype(np.float32)
    weights /= np.linalg.norm(weights, axis=1, keepdims=True)
    pixels = torch.from_numpy(rng.random((args.images, 3, size, size), dtype=np.float32))
    module = adversarial.pixel_zero_shot(model, weights, mean, std, 100.0, device)
    with torch.no_grad():
        # all clean-correct
        labels = np.concatenate(
            [
                module(pixels[i : i + args.batch_size].to(device)).argmax(1).cpu().numpy()
                for i in range(0, args.images, args.batch_size)
            ]
        )
    attack = adversarial.AttackSpec(
        name=args.kind, kind=args.kind, eps=(args.eps,), steps=args.steps
    )
    # warm-up
    adversarial.run_attack(
        module,
        attack,
        pixels[:2],
        labels[:2],
        n_classes=args.classes,
        seed=0,
        batch_size=2,
        progress=False,
    )

    def clean_pass():
        with torch.no_grad():
            return [
                module(pixels[i : i + args.batch_size].to(device)).argmax(1)
                for i in range(0, args.images, args.batch_size)
            ]

    _, t_clean = timed(clean_pass, device)
    (clean, results), t_attack = timed(
        lambda: adversarial.run_attack(
            module,
            attack,
            pixels,
            labels,
            n_classes=args.classes,
            seed=0,
            batch_size=args.batch_size,
            progress=False,
        ),
        device,
    )
    metrics = adversarial.attack_metrics(clean, results[0])
    result = {
        "benchmark": "attack-vs-clean-zero-shot",
        "arch": args.arch,
        "attack": f"{args.kind}-{args.steps} linf eps {args.eps:g}/255",
        "images": args.images,
        "classes": args.classes,
        "batch_size": args.batch_size,
        "clean_seconds_per_1000": round(1000 * t_clean / args.images, 2),
        "attack_seconds_per_1000": round(1000 * t_attack / args.images, 2),
        "attack_images_per_s": round(args.images / t_attack, 2),
        "attack_cost_in_clean_passes": round(t_attack / t_clean, 1),
        "robust_top1": metrics["robust_top1"],
        "max_linf": metrics["max_linf"],
        "torch_threads": torch.get_num_threads(),
        "gpu": torch.cuda.get_device_name(0) if device.startswith("cuda") else None,
        "provenance": provenance.build(
            "bench-attack",
            {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
            seed=args.seed,
            model=models.describe(spec, model),
            device=device,
            packages=("torchattacks",),
        ),
    }
    print(
        f"{'model / device':<30}{spec.weights_label()} {args.arch} / {device} "
        f"({torch.get_num_threads()} threads)"
    )
    print(f"{'attack':<30}{result['attack']}, {args.images} images, {args.classes} classes")
    print(f"{'clean s / 1000 images':<30}{result['clean_seconds_per_1000']:>10.2f}")
    print(f"{'attack s / 1000 images':<30}{result['attack_seconds_per_1000']:>10.2f}")
    print(f"{'attack cost (clean passes)':<30}{result['attack_cost_in_clean_passes']:>10.1f}")
    print(
        f"{'robust top-1 / max L-inf':<30}{metrics['robust_top1']:>10.1f} "
        f"/ {metrics['max_linf']:.3f}"
    )
    suffix = "" if device == "cpu" else f"-{device.split(':')[0]}"
    out = args.out or ROOT / "benchmarks" / "results" / f"bench_attack{suffix}.json"
    write_json(out, result)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
