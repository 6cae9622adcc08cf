"""Benchmark: what each kind of model in the registry costs (docs/models.md): parameters, weight
memory, peak memory of a forward, and images per second of its image forward, beside open_clip's
ViT-B-32 image tower measured in the same process (the baseline the ratios are against).

Input: seeded random images at each model's own input size (speed does not depend on the weights:
every model is a seeded random init). The rate is images / second of `encode_image` under
torch.no_grad, the best of `--repeats` timed batches after one warm-up. Each model is measured in a
process of its own: its peak memory is that process's maximum resident set size (Python, torch, the
model and the forward of one batch; CPU), or torch's peak allocation (CUDA).

    python benchmarks/bench_models.py                                  # CPU, 2 threads
    python benchmarks/bench_models.py --out benchmarks/results/bench_models.json
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import sys
import time
from pathlib import Path

BASELINE = "ViT-B-32"
MODELS = [  # (registry arch): the open_clip baseline first, then the supervised pool
    BASELINE,
    "ViT-L-14",
    "timm:resnet50",
    "timm:vit_base_patch16_224",
    "timm:convnext_base",
    "timm:efficientnet_b0",
]


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def measure(arch: str, batch: int, repeats: int, device: str, threads: int) -> dict:
    import torch

    from vlstress.embedding import models

    spec = models.ModelSpec(arch.replace(":", "-").lower(), arch, None, seed=0)
    model, preprocess, _ = models.load(spec, device, threads=threads)
    size = next(
        t.size for t in getattr(preprocess, "transforms", []) if type(t).__name__ == "CenterCrop"
    )
    height, width = (size, size) if isinstance(size, int) else size
    images = torch.rand(batch, 3, height, width, generator=torch.Generator().manual_seed(0))
    images = images.to(device)
    n_params = sum(p.numel() for p in model.parameters())
    weight_mib = sum(p.numel() * p.element_size() for p in model.parameters()) / 2**20
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    seconds = []
    with torch.no_grad():
        model.encode_image(images)  # warm-up
        for _ in range(repeats):
            if device.startswith("cuda"):
                torch.cuda.synchronize()
            start = time.perf_counter()
            model.encode_image(images)
            if device.startswith("cuda"):
                torch.cuda.synchronize()
            seconds.append(time.perf_counter() - start)
    peak = torch.cuda.max_memory_allocated() / 2**20 if device.startswith("cuda") else _rss_mib()
    return {
        "arch": arch,
        "kind": spec.kind,
        "input": [height, width],
        "n_params": n_params,
        "weights_mib": round(weight_mib, 1),
        "peak_memory_mib": round(peak, 1),
        "images_per_s": round(batch / min(seconds), 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated archs")
    parser.add_argument("--out", type=Path, default=None, help="JSON result")
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)  # the child's model
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one, args.batch, args.repeats, args.device, args.threads)))
        return 0
    import subprocess

    import torch

    found = []
    for arch in args.models.split(","):
        flags = ["--batch", str(args.batch), "--repeats", str(args.repeats)]
        flags += ["--threads", str(args.threads), "--device", args.device, "--one", arch]
        child = subprocess.run(
            [sys.executable, __file__, *flags], capture_output=True, text=True, check=True
        )
        row = json.loads(child.stdout.strip().splitlines()[-1])
        found.append(row)
        print(json.dumps(row), flush=True)
    base = next((r for r in found if r["arch"] == BASELINE), None)
    for row in found:
        row["speed_vs_baseline"] = (
            round(row["images_per_s"] / base["images_per_s"], 3) if base else None
        )
    result = {
        "benchmark": "bench_models",
        "baseline": BASELINE,
        "device": args.device
        if args.device == "cpu"
        else torch.cuda.get_device_name(torch.device(args.device)),
        "cpu": platform.processor() or platform.machine(),
        "threads": args.threads,
        "batch": args.batch,
        "torch": torch.__version__,
        "models": found,
    }
    text = json.dumps(result, indent=1)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
