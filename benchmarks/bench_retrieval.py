"""Benchmark: chunked ranks (vlstress.retrieval_metrics.retrieval_ranks) vs a per-row argsort.

The input is one similarity matrix, 5000 queries x 50010 gallery items by default (the
size of the RoCOCO i2t evaluation: 5000 images against 25005 original + 25005 altered
captions). It is generated once, chunk-wise, from seeded embeddings and written to a raw
float32 file (1 GB) in a temporary folder, so that neither path ever holds it whole:
both read the same rows, `--chunk-size` rows at a time, from that file.

- fast:      vlstress.retrieval_metrics.retrieval_ranks with a score_fn that reads the rows
             (rank = items scoring strictly above the best ground truth; one comparison
             pass per chunk in NumPy, no sorting);
- reference: numpy, one full argsort per row; rank = position of the first ground-truth
             item in the descending order. Ties are put in favour of the ground truth (the
             ground-truth columns are moved first and the sort is stable), which is the
             project's documented convention; rows with an exact tie at the best
             ground-truth score are counted and reported.
- fast-from-embeddings (informational): retrieval_ranks on the embeddings themselves,
             scores computed chunk by chunk as queries @ gallery.T (the pipeline's path).

Each path runs in its own child process (same run, same machine, one after the other), so
its peak memory is its own: peak RSS (VmHWM, reset before the step) and the increase over
the RSS before the step. Prints a table and writes benchmarks/results/retrieval.json.

    python benchmarks/bench_retrieval.py                       # 5000 x 50010, all rows
    python benchmarks/bench_retrieval.py --reference-rows 1000 # reference on a subset, extrapolated
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


# --- memory -----------------------------------------------------------------------------------


def _status_kb(field: str) -> int:
    match = re.search(rf"^{field}:\s+(\d+) kB", Path("/proc/self/status").read_text(), re.M)
    return int(match.group(1)) if match else -1


def reset_peak() -> bool:
    """Reset VmHWM (peak RSS) of this process (Linux >= 4.0); False if not possible."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def memory_probe():
    """Call before a step; the returned function gives (peak_mb, increase_mb) after it."""
    import resource

    exact = reset_peak()
    before = _status_kb("VmRSS")

    def after() -> dict:
        peak = _status_kb("VmHWM") if exact else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return {
            "peak_rss_mb": round(peak / 1024, 1),
            "peak_increase_mb": round((peak - before) / 1024, 1),
            "peak_method": "VmHWM reset via /proc/self/clear_refs"
            if exact
            else "ru_maxrss (process lifetime)",
        }

    return after


# --- data -------------------------------------------------------------------------------------


def ground_truth(n_queries: int, n_gallery: int, per_query: int) -> list[list[int]]:
    """Query i owns gallery items [2*per_query*i, 2*per_query*i + per_query); the next
    per_query items are near-duplicate distractors (like altered captions); the rest is noise."""
    block = 2 * per_query
    if block * n_queries > n_gallery:
        raise SystemExit(f"gallery of {n_gallery} too small for {n_queries} queries x {block}")
    return [list(range(block * i, block * i + per_query)) for i in range(n_queries)]


def make_embeddings(n_queries: int, n_gallery: int, dim: int, per_query: int, seed: int):
    import torch

    gen = torch.Generator().manual_seed(seed)
    gallery = torch.randn(n_gallery, dim, generator=gen)
    block = 2 * per_query
    for i in range(per_query):  # distractor j of query q = its ground truth j + noise
        rows = torch.arange(n_queries) * block + i
        gallery[rows + per_query] = gallery[rows] + 0.6 * torch.randn(n_queries, dim, generator=gen)
    gallery = torch.nn.functional.normalize(gallery, dim=1)
    owners = torch.arange(n_queries)[:, None] * block + torch.arange(per_query)[None, :]
    queries = gallery[owners].mean(dim=1) + 0.08 * torch.randn(n_queries, dim, generator=gen)
    queries = torch.nn.functional.normalize(queries, dim=1)
    return queries.contiguous(), gallery.contiguous()


def write_matrix(path: Path, queries, gallery, chunk: int) -> float:
    """S = queries @ gallery.T written row block by row block (raw float32, row-major)."""
    start = time.perf_counter()
    with open(path, "wb") as fh:
        for row in range(0, queries.shape[0], chunk):
            fh.write((queries[row : row + chunk] @ gallery.T).numpy().tobytes())
    return time.perf_counter() - start


class RowReader:
    """Rows [start, start + n) of the raw matrix file, as a fresh (n, n_gallery) array."""

    def __init__(self, path: Path, n_gallery: int):
        self.fh = open(path, "rb")
        self.n_gallery = n_gallery
        self.seconds = 0.0

    def rows(self, start: int, n: int) -> np.ndarray:
        t = time.perf_counter()
        self.fh.seek(start * self.n_gallery * 4)
        block = np.fromfile(self.fh, dtype=np.float32, count=n * self.n_gallery).reshape(
            n, self.n_gallery
        )
        self.seconds += time.perf_counter() - t
        return block


# --- the three paths (each in a child process) ------------------------------------------------


def fast_from_file(path, n_queries, n_gallery, per_query, chunk, threads):
    from vlstress.retrieval_metrics import pad_ground_truth, retrieval_ranks

    gt = pad_ground_truth(ground_truth(n_queries, n_gallery, per_query))
    reader = RowReader(path, n_gallery)
    index = np.arange(n_queries)[:, None]
    warm_up()

    def score_fn(rows, _gallery):
        return reader.rows(int(rows[0, 0]), rows.shape[0])

    after = memory_probe()
    start = time.perf_counter()
    result = retrieval_ranks(index, np.empty(0), gt, chunk_size=chunk, score_fn=score_fn)
    seconds = time.perf_counter() - start
    return {
        "ranks": result.ranks,
        "top1": result.top1,
        "rows": n_queries,
        "seconds": seconds,
        "read_seconds": reader.seconds,
        **after(),
    }


def reference_from_file(path, n_queries, n_gallery, per_query, chunk, rows, threads):
    gts = ground_truth(n_queries, n_gallery, per_query)
    reader = RowReader(path, n_gallery)
    ranks = np.empty(rows, dtype=np.int64)
    top1 = np.empty(rows, dtype=np.int64)
    ties = 0
    after = memory_probe()
    start = time.perf_counter()
    sort_seconds = 0.0
    for first in range(0, rows, chunk):
        block = reader.rows(first, min(chunk, rows - first))
        for r, row in enumerate(block):
            q = first + r
            gt = np.asarray(gts[q])
            rest = np.ones(n_gallery, dtype=bool)
            rest[gt] = False
            perm = np.concatenate([gt, np.flatnonzero(rest)])  # ground truth first: ties go to it
            t = time.perf_counter()
            order = np.argsort(-row[perm], kind="stable")  # the per-row full sort
            sort_seconds += time.perf_counter() - t
            ranks[q] = np.flatnonzero(order < len(gt))[0]
            top1[q] = perm[order[0]]
            ties += int(np.count_nonzero(row[rest] == row[gt].max()) > 0)
    seconds = time.perf_counter() - start
    return {
        "ranks": ranks,
        "top1": top1,
        "rows": rows,
        "seconds": seconds,
        "sort_seconds": sort_seconds,
        "read_seconds": reader.seconds,
        "rows_with_ties": ties,
        **after(),
    }


def fast_from_embeddings(emb_path, n_queries, n_gallery, per_query, chunk, threads):
    from vlstress.retrieval_metrics import pad_ground_truth, retrieval_ranks

    data = np.load(emb_path)
    queries, gallery = data["queries"], data["gallery"]
    gt = pad_ground_truth(ground_truth(n_queries, n_gallery, per_query))
    warm_up()
    after = memory_probe()
    start = time.perf_counter()
    result = retrieval_ranks(queries, gallery, gt, chunk_size=chunk)
    seconds = time.perf_counter() - start
    return {
        "ranks": result.ranks,
        "top1": result.top1,
        "rows": n_queries,
        "seconds": seconds,
        **after(),
    }


def warm_up() -> None:
    """First array ops in a fresh process pay one-off costs (allocator, BLAS threads): not ranking
    time."""
    from vlstress.retrieval_metrics import ranks_from_scores

    scores = np.random.default_rng(0).random((64, 4096), dtype=np.float32)
    ranks_from_scores(scores, np.zeros((64, 1), dtype=np.int64))


def in_child(fn, *args):
    with mp.get_context("spawn").Pool(1) as pool:
        return pool.apply(fn, args)


# --- main -------------------------------------------------------------------------------------


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=5000)
    parser.add_argument("--gallery", type=int, default=50010)
    parser.add_argument("--dim", type=int, default=512, help="embedding size (CLIP ViT-B: 512)")
    parser.add_argument(
        "--per-query", type=int, default=5, help="ground-truth items per query (captions per image)"
    )
    parser.add_argument(
        "--chunk-size", type=int, default=1024, help="query rows scored at a time (both paths)"
    )
    parser.add_argument(
        "--reference-rows",
        type=int,
        default=None,
        help="argsort only the first N rows, extrapolate (default: all)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch CPU threads of the data generation (default: torch's choice)",
    )
    parser.add_argument(
        "--workdir",
        type=Path,
        default=None,
        help="where the 1 GB matrix file goes (default: a temp folder)",
    )
    parser.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks" / "results" / "retrieval.json"
    )
    args = parser.parse_args(argv)

    import torch

    from vlstress import provenance
    from vlstress.io import write_json
    from vlstress.retrieval_metrics import recall_at_k

    if args.threads:
        torch.set_num_threads(args.threads)

    n_q, n_g = args.queries, args.gallery
    ref_rows = min(args.reference_rows or n_q, n_q)
    matrix_gb = n_q * n_g * 4 / 1e9
    if args.workdir is not None:
        args.workdir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=args.workdir, prefix="bench_retrieval.") as tmp:
        tmp = Path(tmp)
        queries, gallery = make_embeddings(n_q, n_g, args.dim, args.per_query, args.seed)
        np.savez(tmp / "emb.npz", queries=queries.numpy(), gallery=gallery.numpy())
        write_seconds = write_matrix(tmp / "sim.f32", queries, gallery, args.chunk_size)
        del queries, gallery
        common = (n_q, n_g, args.per_query, args.chunk_size)
        fast = in_child(fast_from_file, tmp / "sim.f32", *common, args.threads)
        ref = in_child(reference_from_file, tmp / "sim.f32", *common, ref_rows, args.threads)
        emb = in_child(fast_from_embeddings, tmp / "emb.npz", *common, args.threads)

    same_ranks = bool(np.array_equal(fast["ranks"][:ref_rows], ref["ranks"]))
    same_top1 = bool(np.array_equal(fast["top1"][:ref_rows], ref["top1"]))
    ks = (1, 5, 10)
    recalls = {
        "fast": recall_at_k(fast["ranks"][:ref_rows], ks),
        "reference": recall_at_k(ref["ranks"], ks),
        "fast_all_rows": recall_at_k(fast["ranks"], ks),
        "fast_from_embeddings_all_rows": recall_at_k(emb["ranks"], ks),
    }
    ref_full_seconds = ref["seconds"] * n_q / ref_rows  # extrapolated when ref_rows < n_q
    speedup = ref_full_seconds / fast["seconds"]
    result = {
        "benchmark": "retrieval-ranks-chunked-vs-per-row-argsort",
        "matrix": {
            "queries": n_q,
            "gallery": n_g,
            "float32_gb": round(matrix_gb, 3),
            "dim": args.dim,
            "per_query": args.per_query,
        },
        "chunk_size": args.chunk_size,
        "write_matrix_seconds": round(write_seconds, 2),
        "reference_rows": ref_rows,
        "reference_extrapolated": ref_rows < n_q,
        "fast": {
            k: (round(v, 3) if isinstance(v, float) else v)
            for k, v in fast.items()
            if k not in ("ranks", "top1")
        },
        "reference": {
            k: (round(v, 3) if isinstance(v, float) else v)
            for k, v in ref.items()
            if k not in ("ranks", "top1")
        },
        "fast_from_embeddings": {
            k: (round(v, 3) if isinstance(v, float) else v)
            for k, v in emb.items()
            if k not in ("ranks", "top1")
        },
        "reference_seconds_all_rows": round(ref_full_seconds, 2),
        "speedup": round(speedup, 1),
        "speedup_excluding_reads": round(
            (ref["seconds"] - ref["read_seconds"])
            * n_q
            / ref_rows
            / (fast["seconds"] - fast["read_seconds"]),
            1,
        ),
        "identical_ranks": same_ranks,
        "identical_top1": same_top1,
        "rank_mismatches": int(np.count_nonzero(fast["ranks"][:ref_rows] != ref["ranks"])),
        "from_embeddings_rank_mismatches": int(np.count_nonzero(fast["ranks"] != emb["ranks"])),
        "recall": recalls,
        "identical_recall": recalls["fast"] == recalls["reference"],
        "passes": bool(same_ranks and same_top1 and speedup >= 10),
        "torch_threads": torch.get_num_threads() if not args.threads else args.threads,
        "cpu_count": os.cpu_count(),
        "provenance": provenance.build(
            "bench-retrieval",
            {
                k: (str(v) if isinstance(v, Path) else v)
                for k, v in vars(args).items()
                if k not in ("out", "workdir")
            },
            seed=args.seed,
            device="cpu",
        ),
    }
    line = "{:<34}{:>10}{:>12}{:>12}{:>8}{:>8}{:>8}"
    print(
        f"similarity matrix {n_q} x {n_g} float32 ({matrix_gb:.2f} GB, never held whole), "
        f"chunk {args.chunk_size} rows"
    )
    print(line.format("path", "seconds", "peak MB", "+MB", "R@1", "R@5", "R@10"))
    rows = [
        ("fast: chunked ranks (NumPy)", fast, recalls["fast_all_rows"]),
        (f"reference: argsort/row ({ref_rows} rows)", ref, recalls["reference"]),
        ("fast from embeddings (matmul)", emb, recalls["fast_from_embeddings_all_rows"]),
    ]
    for name, run, rec in rows:
        print(
            line.format(
                name,
                f"{run['seconds']:.2f}",
                run["peak_rss_mb"],
                run["peak_increase_mb"],
                *(f"{rec[f'R@{k}']:.2f}" for k in ks),
            )
        )
    if ref_rows < n_q:
        print(f"reference extrapolated to {n_q} rows: {ref_full_seconds:.1f} s (linear in rows)")
    print(
        f"reading the matrix: fast {fast['read_seconds']:.2f} s, "
        f"reference {ref['read_seconds']:.2f} s; argsort alone {ref['sort_seconds']:.2f} s"
    )
    print(
        f"speed-up {speedup:.1f}x (excluding reads {result['speedup_excluding_reads']}x); "
        f"identical ranks {same_ranks}, top-1 {same_top1}; "
        f"rows with exact ties {ref['rows_with_ties']}"
    )
    print(f"pass (identical, >= 10x): {result['passes']}")
    write_json(args.out, result)
    print(f"wrote {args.out}")
    return 0 if result["passes"] else 1


if __name__ == "__main__":
    sys.exit(main())
