"""Benchmark: what an assistant (LLaVA) costs in the assistant suite (docs/models.md): parameters,
peak memory, and questions per second of `vlstress ask`'s generation (`llava_models.generate`:
the processor's chat template, greedy decoding, prompts padded on the left), against the tiny
random-init LLaVA of the demo measured in the same way (the baseline the ratios are against).

Models, each a seeded random init built from a config (speed does not depend on the weights):
- `llava:tiny`: the demo's (32 px CLIP tower, two-layer Llama, byte-level tokenizer);
- `clip-l14-336 + llama-small`: LLaVA-1.5's vision tower (CLIP ViT-L/14 at 336 px, 577 positions,
  576 image tokens into the language model) on a 4-layer, 512-wide Llama: the image side of a real
  LLaVA-1.5 at full size, the language model small enough for this machine.
Input: seeded random images at each processor's size, the multiple-choice prompt of 4 options.
Each model in a process of its own (its peak resident memory is the process's).

    python benchmarks/bench_assistant.py --out benchmarks/results/bench_assistant.json
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

MODELS = ("llava:tiny", "clip-l14-336+llama-small")


# LLaVA-1.5's vision tower, CLIP ViT-L/14 at 336 px, and a small Llama
L14_336 = {"hidden_size": 1024, "intermediate_size": 4096, "num_hidden_layers": 24,
           "num_attention_heads": 16, "projection_dim": 768}  # fmt: skip
SMALL_LLAMA = {"hidden_size": 512, "intermediate_size": 1376, "num_hidden_layers": 4,
               "num_attention_heads": 8, "num_key_value_heads": 8,
               "max_position_embeddings": 2048}  # fmt: skip


def build(name: str):
    """(model, processor) of a benchmark model, seeded random init."""
    from vlstress.embedding import llava_models

    if name == "llava:tiny":
        return llava_models.tiny(seed=0)
    return llava_models.random_llava(
        0, image_size=336, patch_size=14, vision=L14_336, text=SMALL_LLAMA
    )


def measure(name: str, questions: int, batch: int, new_tokens: int, threads: int, folder: Path):
    import numpy as np
    import torch
    from PIL import Image

    from vlstress.embedding import llava_models
    from vlstress.suites.assistant import answers

    torch.set_num_threads(threads)
    model, processor = build(name)
    model.eval()
    processor.tokenizer.padding_side = "left"
    paths = []
    for i in range(questions):
        pixels = np.random.default_rng(i).integers(0, 255, (336, 336, 3), dtype=np.uint8)
        paths.append(folder / f"{i}.png")
        Image.fromarray(pixels).save(paths[-1])
    text = answers.prompt("What is the main object in this image?", ["a", "b", "c", "d"])

    def run(n: int) -> float:
        start = time.perf_counter()
        llava_models.generate(
            model, processor, paths[:n], [text] * n, batch_size=batch,
            max_new_tokens=new_tokens, device="cpu", desc=name,
        )  # fmt: skip
        return time.perf_counter() - start

    run(min(batch, questions))  # warm-up
    seconds = run(questions)
    return {
        "model": name,
        "n_params": int(sum(p.numel() for p in model.parameters())),
        **{k: v for k, v in llava_models.n_params(model).items() if k == "n_params_vision"},
        "questions": questions,
        "questions_per_s": questions / seconds,
        "seconds": seconds,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--new-tokens", type=int, default=8)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--models", default=",".join(MODELS), help=f"comma-separated, of {', '.join(MODELS)}"
    )
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a model, in this process
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if args.one:
        import tempfile

        with tempfile.TemporaryDirectory() as folder:
            found = measure(args.one, args.questions, args.batch_size, args.new_tokens,
                            args.threads, Path(folder))  # fmt: skip
        print(json.dumps(found))
        return
    names = args.models.split(",")
    unknown = sorted(set(names) - set(MODELS))
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}: choose among {', '.join(MODELS)}")
    rows = []
    for name in names:
        done = subprocess.run(
            [sys.executable, __file__, "--one", name, "--questions", str(args.questions),
             "--batch-size", str(args.batch_size), "--new-tokens", str(args.new_tokens),
             "--threads", str(args.threads)],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    base = rows[0]["questions_per_s"]
    for row in rows:
        row["vs_tiny"] = row["questions_per_s"] / base
        print(
            f"{row['model']:28s} {row['n_params'] / 1e6:8.1f} M params  "
            f"{row['questions_per_s']:7.2f} questions/s  {row['vs_tiny']:.3f}x  "
            f"peak {row['peak_rss_mib']:,.0f} MiB"
        )
    result = {
        "cpu": platform.processor() or platform.machine(),
        "threads": args.threads,
        "batch_size": args.batch_size,
        "new_tokens": args.new_tokens,
        "models": rows,
    }
    if args.out:
        from vlstress.io import write_json

        write_json(args.out, result)


if __name__ == "__main__":
    main()
