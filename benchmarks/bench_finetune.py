"""Benchmark: what each fine-tuning method costs (docs/finetune.md, docs/models.md): trainable
parameters, seconds per optimizer step, peak memory, against full fine-tuning measured the same
way (the baseline the ratios are against); and the seconds of one WiSE-FT interpolation.

One step = the CLIP loss on a batch of image-caption pairs through both towers, backward, AdamW
(vlstress.suites.finetune.trainer.optimizer_for), as `vlstress finetune` runs it with
w_sc = w_vc = 0 and as FLYP's step is. LoRA adapters go on the image tower's MLPs
(`mlp.c_fc,mlp.c_proj`, the demo's layers) through vlstress.suites.finetune.lora. `standard` is
standard fine-tuning's step: the image tower and a 1000-class head (vlstress.embedding.heads),
cross-entropy, the text tower frozen. Input: seeded random pixels and tokens; the model is
a seeded random init (speed does not depend on the weights). The time is the best of `--repeats`
steps after one warm-up step. Each method runs in a process of its own: its peak memory is that
process's maximum resident set size (CPU) or torch's peak allocation (CUDA).

    python benchmarks/bench_finetune.py                      # ViT-B-32, CPU, 2 threads, batch 8
    python benchmarks/bench_finetune.py --out benchmarks/results/bench_finetune.json
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import sys
import time
from pathlib import Path

BASELINE = "full"
METHODS = {  # name -> (LoRA rank (0 = every weight trains), loss)
    BASELINE: (0, "clip"),
    "lora-r4": (4, "clip"),
    "lora-r16": (16, "clip"),
    "standard": (0, "standard"),
}
HEAD_CLASSES = 1000  # standard fine-tuning's head: ImageNet's classes
MODULES = ("mlp.c_fc", "mlp.c_proj")


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def measure(arch: str, method: str, batch: int, repeats: int, device: str, threads: int) -> dict:
    import torch
    from open_clip.loss import ClipLoss

    from vlstress.embedding import models
    from vlstress.suites.finetune import lora
    from vlstress.suites.finetune.trainer import TrainConfig, optimizer_for

    spec = models.ModelSpec(arch.lower(), arch, None, seed=0)
    model, _, tokenizer = models.load(spec, device, threads=threads)
    rank, loss = METHODS[method]
    if loss == "standard":
        from vlstress.embedding import heads

        dim = model.text_projection.shape[1]
        rows = torch.nn.functional.normalize(torch.randn(HEAD_CLASSES, dim), dim=-1)
        heads.attach(model, rows.numpy(), [str(i) for i in range(HEAD_CLASSES)])
        for name, parameter in model.named_parameters():
            if not name.startswith(("visual.", "vlstress_head.")):
                parameter.requires_grad_(False)
    total = sum(p.numel() for p in model.parameters())
    if rank:
        torch.manual_seed(0)
        lora.add_adapters(
            model, rank=rank, alpha=2 * rank, dropout=0.0, tower="image", modules=MODULES
        )
    model.train()
    optimizer = optimizer_for(model, TrainConfig(steps=1, batch_size=batch, lr=1e-5))
    size = model.visual.image_size
    height, width = (size, size) if isinstance(size, int) else size
    generator = torch.Generator().manual_seed(0)
    images = torch.rand(batch, 3, height, width, generator=generator).to(device)
    texts = tokenizer([f"a photo of thing number {i}" for i in range(batch)]).to(device)
    labels = torch.randint(0, HEAD_CLASSES, (batch,), generator=generator).to(device)
    loss_fn = ClipLoss()

    def loss_value():
        if loss == "standard":
            image = torch.nn.functional.normalize(model.encode_image(images), dim=-1)
            return torch.nn.functional.cross_entropy(model.vlstress_head(image), labels)
        image, text, scale = model(images, texts)[:3]
        return loss_fn(image, text, scale)

    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()

    def step() -> float:
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        loss_value().backward()
        optimizer.step()
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        return time.perf_counter() - start

    step()  # warm-up (and the optimizer's state)
    seconds = min(step() for _ in range(repeats))
    peak = torch.cuda.max_memory_allocated() / 2**20 if device.startswith("cuda") else _rss_mib()
    return {
        "method": method,
        "lora_rank": rank,
        "loss": loss,
        "n_params": total,
        "trainable_params": lora.trainable(model),
        "seconds_per_step": round(seconds, 3),
        "pairs_per_s": round(batch / seconds, 2),
        "peak_memory_mib": round(peak, 1),
    }


def wise_seconds(arch: str, threads: int) -> float:
    """One WiSE-FT interpolation of two state dicts of `arch` (alpha 0.5), the best of 3."""
    import torch

    from vlstress.embedding import models
    from vlstress.suites.finetune.wise import interpolate

    torch.set_num_threads(threads)
    model, _, _ = models.load(models.ModelSpec("a", arch, None, seed=0), "cpu", threads=threads)
    base = {k: v.detach().clone() for k, v in model.state_dict().items()}
    other = {k: v + 1 if v.is_floating_point() else v for k, v in base.items()}
    times = []
    for _ in range(3):
        start = time.perf_counter()
        interpolate(base, other, 0.5)
        times.append(time.perf_counter() - start)
    return round(min(times), 3)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arch", default="ViT-B-32")
    parser.add_argument("--batch", type=int, default=8, help="image-caption pairs per step")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", type=Path, default=None, help="JSON result")
    parser.add_argument(
        "--methods",
        default=",".join(METHODS),
        help=f"comma-separated, of {', '.join(METHODS)} ({BASELINE} always runs: the reference)",
    )
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)  # the child's method
    args = parser.parse_args()
    if args.one:
        row = measure(args.arch, args.one, args.batch, args.repeats, args.device, args.threads)
        print(json.dumps(row))
        return 0
    import subprocess

    import torch

    chosen = list(dict.fromkeys([BASELINE, *args.methods.split(",")]))
    unknown = sorted(set(chosen) - set(METHODS))
    if unknown:
        parser.error(f"unknown method(s) {', '.join(unknown)}: choose among {', '.join(METHODS)}")
    found = []
    for method in chosen:
        flags = ["--arch", args.arch, "--batch", str(args.batch), "--repeats", str(args.repeats)]
        flags += ["--threads", str(args.threads), "--device", args.device, "--one", method]
        child = subprocess.run(
            [sys.executable, __file__, *flags], capture_output=True, text=True, check=True
        )
        row = json.loads(child.stdout.strip().splitlines()[-1])
        found.append(row)
        print(json.dumps(row), flush=True)
    base = next(r for r in found if r["method"] == BASELINE)
    for row in found:
        row["time_vs_full"] = round(row["seconds_per_step"] / base["seconds_per_step"], 3)
        row["memory_vs_full"] = round(row["peak_memory_mib"] / base["peak_memory_mib"], 3)
    result = {
        "benchmark": "bench_finetune",
        "arch": args.arch,
        "baseline": BASELINE,
        "device": args.device
        if args.device == "cpu"
        else torch.cuda.get_device_name(torch.device(args.device)),
        "cpu": platform.processor() or platform.machine(),
        "threads": args.threads,
        "batch": args.batch,
        "torch": torch.__version__,
        "methods": found,
        "wise_ft_seconds": wise_seconds(args.arch, args.threads),
    }
    text = json.dumps(result, indent=1)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
