"""Benchmark: the overlap suite's nearest-neighbour search (faiss), on one core, and what a
paper-scale search costs.

Input: seeded random unit vectors of CLIP's width (512) as the training collection and the test
images. `vlstress.suites.overlap.neighbours` builds the exact index (IndexFlatIP) and searches
the nearest training image of every test image; the rate is multiply-adds per second of one core
(queries x collection x width / seconds), the best of `--repeats`. `vlstress cost` prices the
search with it (an IVF index searches nprobe / nlist of the collection).

    python benchmarks/bench_overlap.py                       # 2,000 x 100,000
    python benchmarks/bench_overlap.py --out benchmarks/results/bench_overlap.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

IMAGENET_VAL = 50_000
LAION_400M = 400_000_000


def unit_rows(rng: np.random.Generator, n: int, width: int) -> np.ndarray:
    rows = rng.standard_normal((n, width), dtype=np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--collection", type=int, default=100_000, help="training embeddings")
    parser.add_argument("--queries", type=int, default=2_000, help="test embeddings")
    parser.add_argument("--width", type=int, default=512, help="embedding width")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None, help="JSON result")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import faiss

    from vlstress.suites.overlap import neighbours

    faiss.omp_set_num_threads(1)
    rng = np.random.default_rng(0)
    collection = unit_rows(rng, args.collection, args.width)
    queries = unit_rows(rng, args.queries, args.width)
    index, _ = neighbours.build_index(collection, "flat", nlist=1, nprobe=1, seed=0)
    seconds = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        neighbours.nearest(index, queries, collection)
        seconds.append(time.perf_counter() - start)
    best = min(seconds)
    macs = args.queries * args.collection * args.width / best
    flat_h = IMAGENET_VAL * LAION_400M * args.width / macs / 3600
    result = {
        "flat_search": {
            "collection": args.collection,
            "queries": args.queries,
            "width": args.width,
            "seconds": seconds,
            "one_core_macs_per_s": macs,
        },
        "estimate": {
            "imagenet_val_vs_laion_400m_flat_core_h": flat_h,
            "with_ivf_nlist_4096_nprobe_32_core_h": flat_h * 32 / 4096,
        },
        "provenance": {
            "faiss": faiss.__version__,
            "numpy": np.__version__,
            "python": sys.version.split()[0],
            "cpu": platform.processor() or platform.machine(),
            "threads": 1,
        },
    }
    print(
        f"flat search, one core: {macs / 1e9:.1f} G multiply-adds/s "
        f"({args.queries:,} x {args.collection:,} x {args.width} in {best:.2f} s)\n"
        f"ImageNet val (50,000) against LAION-400M: {flat_h:,.0f} core-hours exact, "
        f"{flat_h * 32 / 4096:,.0f} with IVF (nlist 4096, nprobe 32)"
    )
    if args.out is not None:
        from vlstress.io import write_text

        write_text(args.out, json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
