"""Benchmark: trimmed text encoder (vlstress.embedding.encoders) vs open_clip's encode_text.

Encodes real COCO captions (Karpathy test split, RoCOCO release) with one open_clip model
twice in the same run, with the same batch size:

- reference: `model.encode_text` on consecutive batches at the full 77-token context;
- trimmed:   `vlstress.embedding.encoders.encode_texts_raw` (de-duplicate, sort by token length,
             trim each batch to its longest caption).

Prints a table and writes benchmarks/results/bench_text_encoder[-<tag>].json with provenance.
Speed does not depend on the weights, so the default is a seeded random-init ViT-B-32.
With --ei the workload is the EI workload: every caption plus all its one-word deletions.

    python benchmarks/bench_text_encoder.py --n-captions 300
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CAPTIONS = ROOT.parent / "shared" / "data" / "rococo" / "coco_karpathy_test.json"


def load_captions(path: Path, n: int, seed: int) -> list[str]:
    entries = json.loads(path.read_text(encoding="utf-8"))
    captions = [c for entry in entries for c in entry["caption"]]
    return random.Random(seed).sample(captions, min(n, len(captions)))


def with_deletions(captions: list[str]) -> list[str]:
    from vlstress.suites.rococo_text.words import delete_word, word_positions

    out = []
    for caption in captions:
        out.append(caption)
        out.extend(delete_word(caption, p) for p in word_positions(caption))
    return out


@torch.no_grad()
def reference_encode(model, tokenizer, captions, batch_size, device):
    chunks = []
    for start in range(0, len(captions), batch_size):
        tokens = tokenizer(captions[start : start + batch_size]).to(device)
        chunks.append(model.encode_text(tokens).float().cpu())
    return torch.cat(chunks).numpy()


def timed(fn, device):
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    start = time.perf_counter()
    out = fn()
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return out, time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--captions", type=Path, default=DEFAULT_CAPTIONS, help="official-format caption list"
    )
    parser.add_argument(
        "--n-captions", type=int, default=300, help="captions sampled from the file"
    )
    parser.add_argument(
        "--ei",
        action="store_true",
        help="add every one-word deletion of each caption (EI workload)",
    )
    parser.add_argument("--arch", default="ViT-B-32")
    parser.add_argument("--pretrained", default=None, help="default: seeded random init")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--device", default="auto")
    parser.add_argument(
        "--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)"
    )
    parser.add_argument(
        "--repeats", type=int, default=2, help="timed runs of each path (best is reported)"
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="default: benchmarks/results/bench_text_encoder[-ei].json",
    )
    args = parser.parse_args(argv)

    from vlstress import provenance
    from vlstress.embedding import models
    from vlstress.embedding.encoders import (
        encode_texts_raw,
        pooled_positions,
        trimmable_text_tower,
    )
    from vlstress.io import write_json

    if not args.captions.is_file():
        print(f"captions not found: {args.captions}", file=sys.stderr)
        return 2
    if args.threads:
        torch.set_num_threads(args.threads)
    captions = load_captions(args.captions, args.n_captions, args.seed)
    workload = with_deletions(captions) if args.ei else captions
    device = models.resolve_device(args.device)
    spec = models.ModelSpec(
        slug=args.arch.lower(), arch=args.arch, pretrained=args.pretrained, seed=args.seed
    )
    model, _, tokenizer = models.load(spec, device)
    tower, reason = trimmable_text_tower(model)
    if tower is None:
        print(f"{args.arch}: trimming not exact ({reason}); nothing to benchmark", file=sys.stderr)
        return 2
    lengths = (pooled_positions(tokenizer(workload), tower.pool_type, tower.eos_id) + 1).numpy()

    # warm-up (allocator, kernels) on a few captions, then alternate the timed runs
    reference_encode(model, tokenizer, workload[:8], args.batch_size, device)
    encode_texts_raw(
        model, tokenizer, workload[:8], batch_size=args.batch_size, device=device, progress=False
    )
    ref_times, fast_times = [], []
    for _ in range(args.repeats):
        ref, t = timed(
            lambda: reference_encode(model, tokenizer, workload, args.batch_size, device), device
        )
        ref_times.append(t)
        fast, t = timed(
            lambda: encode_texts_raw(
                model,
                tokenizer,
                workload,
                batch_size=args.batch_size,
                device=device,
                progress=False,
            ),
            device,
        )
        fast_times.append(t)
    t_ref, t_fast = min(ref_times), min(fast_times)
    max_abs = float(np.abs(fast - ref).max())
    norm = lambda a: a / np.linalg.norm(a, axis=1, keepdims=True)  # noqa: E731
    max_abs_normalised = float(np.abs(norm(fast) - norm(ref)).max())
    result = {
        "benchmark": "text-encoder-trimmed-vs-encode_text",
        "captions_file": str(args.captions.name),
        "workload": "captions+deletions (EI)" if args.ei else "captions",
        "n_source_captions": len(captions),
        "n_texts": len(workload),
        "n_unique_texts": len(set(workload)),
        "batch_size": args.batch_size,
        "context_length": int(tokenizer(["a"]).shape[1]),
        "tokens_mean": round(float(lengths.mean()), 2),
        "tokens_max": int(lengths.max()),
        "reference_seconds": round(t_ref, 3),
        "trimmed_seconds": round(t_fast, 3),
        "reference_texts_per_s": round(len(workload) / t_ref, 1),
        "trimmed_texts_per_s": round(len(workload) / t_fast, 1),
        "speedup": round(t_ref / t_fast, 2),
        "max_abs_diff": max_abs,
        "max_abs_diff_normalised": max_abs_normalised,
        "passes": bool(max_abs < 1e-5 and t_ref / t_fast >= 3.0),
        "torch_threads": torch.get_num_threads(),
        "provenance": provenance.build(
            "bench-text-encoder",
            {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
            seed=args.seed,
            model=models.describe(spec, model),
            device=device,
        ),
    }
    print(f"{'workload':<28}{result['workload']}")
    print(f"{'texts (unique)':<28}{result['n_texts']} ({result['n_unique_texts']})")
    print(
        f"{'model / device':<28}{spec.weights_label()} {args.arch} / {device}, "
        f"batch {args.batch_size}"
    )
    print(
        f"{'tokens mean / max':<28}{result['tokens_mean']} / {result['tokens_max']} "
        f"of {result['context_length']}"
    )
    print(f"{'':<28}{'seconds':>10}{'texts/s':>10}")
    print(f"{'encode_text (77 ctx)':<28}{t_ref:>10.2f}{result['reference_texts_per_s']:>10.1f}")
    print(f"{'trimmed (vlstress)':<28}{t_fast:>10.2f}{result['trimmed_texts_per_s']:>10.1f}")
    print(f"{'speed-up':<28}{result['speedup']:>10.2f}x")
    print(f"{'max |diff| raw / normalised':<28}{max_abs:.2e} / {max_abs_normalised:.2e}")
    print(f"{'pass (<1e-5 and >=3x)':<28}{result['passes']}")
    suffix = ("-ei" if args.ei else "") + ("" if device == "cpu" else f"-{device.split(':')[0]}")
    out = args.out or ROOT / "benchmarks" / "results" / f"bench_text_encoder{suffix}.json"
    write_json(out, result)
    print(f"wrote {out}")
    return 0 if result["passes"] else 1


if __name__ == "__main__":
    sys.exit(main())
