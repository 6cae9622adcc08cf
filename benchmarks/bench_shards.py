"""Benchmark: a sharded zero-shot embedding job against one job, on N synthetic labelled JPEGs.

Builds (once, cached) a classification test set of N JPEGs (`vlstress testset`'s manifest):
a few hundred distinct seeded pictures (bench_embedding.py's colour fields, at 320x240 so that
decoding 2N images fits the GPU check's time), hard-linked under N names, labels cycling over
10 classes. Then, in a scratch project whose params switch on only the zeroshot suite, with a
seeded random-init ViT-B-32 (speed does not depend on the weights), each command a process of
its own as the workflow runs it (so every wall time includes the model's start-up):

- one job:  `vlstress embed-zeroshot --sets images`: wall time, images/s, and the time and
            images/s of its embedding pass alone (from its log);
- sharded:  the same job as S shards, one after the other on the same device
            (`--shard K --shards S`), then `vlstress embed-join`: each shard's rows and wall
            time, the join's wall time, their sum and its overhead over the one job;
- identical: whether every file of the joined folder has the sha256 of the one job's (the
            join writes to the path the one job wrote to, so the sidecars' commands agree), and
            the embeddings' max |diff| where they differ. Reported, not asserted: on a GPU the
            same batches should give the same bytes.

Writes one JSON with provenance (torch, device, git commit, the command).

    python benchmarks/bench_shards.py --device cpu --images 200 --shards 2       # smoke run
    python benchmarks/bench_shards.py --images 50000 --shards 4 --workers 8 \
        --batch-size 256 --out benchmarks/results/bench_shards-h100.json         # GPU node
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import bench_embedding as synthetic  # noqa: E402  (the same synthetic pictures)

SIZE = (320, 240)  # a quarter of COCO's pixels: 2N decodes stay within the GPU check's minutes
CLASSES = [f"class {i}" for i in range(10)]
TESTSET = "synthetic"
DATASET_VERSION = 1  # bump when the images or the manifest change


# ----------------------------------------------------------------------------- the test set


def write_picture(job: tuple[int, str]) -> None:
    seed, path = job
    picture = synthetic.synthetic_photo(seed).resize(SIZE)
    picture.save(path, format="JPEG", quality=synthetic.QUALITY)


def build_testset(folder: Path, n: int, distinct: int, seed: int) -> None:
    """`folder`: `distinct` pictures written once, N hard links to them (cheap: 50,000 files in
    seconds, one page cache) and the manifest; kept while its spec is unchanged."""
    from vlstress.testsets import manifest as testsets

    spec = {"images": n, "distinct": distinct, "seed": seed, "size": list(SIZE)}
    spec.update(quality=synthetic.QUALITY, version=DATASET_VERSION)
    marker = folder / "dataset.json"
    if marker.is_file() and json.loads(marker.read_text()) == spec:
        return
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "distinct").mkdir(parents=True)
    (folder / "images").mkdir()
    start = time.perf_counter()
    sources = [str(folder / "distinct" / f"{i:04d}.jpg") for i in range(distinct)]
    with ProcessPoolExecutor(os.cpu_count()) as pool:
        list(pool.map(write_picture, [(seed * 1_000_003 + i, p) for i, p in enumerate(sources)]))
    images = []
    for i in range(n):
        os.link(sources[i % distinct], folder / "images" / f"{i:06d}.jpg")
        images.append({"path": f"images/{i:06d}.jpg", "label": i % len(CLASSES)})
    data = testsets.ClassificationSet(TESTSET, "imagefolder", CLASSES, CLASSES, str(folder), images)
    testsets.write(folder / testsets.MANIFEST_NAME, data)
    marker.write_text(json.dumps(spec))
    print(f"built {n} images ({distinct} distinct) in {time.perf_counter() - start:.1f}s")


def write_params(project: Path) -> None:
    """The repository's params with only the zeroshot suite on and its one test set."""
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["suites"] = {name: name == "zeroshot" for name in params["suites"]}
    entry = next(iter(params["zeroshot"]["testsets"].values()))
    params["zeroshot"]["testsets"] = {TESTSET: entry}
    (project / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))


# ----------------------------------------------------------------------------- the jobs


def job(project: Path, argv: list[str], log: Path) -> float:
    """Run one `vlstress` command in `project`; its wall seconds (its output goes to `log`)."""
    env = {**os.environ, "TQDM_DISABLE": "1"}
    start = time.perf_counter()
    with log.open("w") as out:
        done = subprocess.run(
            [sys.executable, "-m", "vlstress", *argv], cwd=project, env=env, stdout=out, stderr=out
        )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        tail = "".join(log.read_text().splitlines(keepends=True)[-20:])
        raise SystemExit(f"vlstress {argv[0]} failed ({done.returncode}); {log}:\n{tail}")
    return wall


def embed_argv(args: argparse.Namespace, out: str, shard: int | None = None) -> list[str]:
    """The image job's command; with `shard`, one of --shards (the flags the join drops)."""
    from vlstress.pipeline import providers

    flags = ["--device", args.device, "--batch-size", str(args.batch_size)]
    flags += ["--workers", str(args.workers), "--seed", str(args.seed)]
    where = [] if shard is None else ["--shard", str(shard), "--shards", str(args.shards)]
    sets_from = ",".join(providers("zeroshot"))
    head = ["embed-zeroshot", "--params", "params.yaml", "--sets", "images"]
    return [*head, "--sets-from", sets_from, *where, *model_flags(args.arch), *flags, "--out", out]


def embedding_seconds(log: Path) -> float | None:
    """The one job's embedding pass alone, from the line vlstress.embedding.sets logs per set."""
    found = re.search(r"(\d+) rows embedded in ([\d.]+) s", log.read_text())
    return float(found.group(2)) if found else None


def one_job(args: argparse.Namespace, project: Path, out: str) -> dict:
    log = project / "logs" / "one.log"
    wall = job(project, embed_argv(args, out), log)
    embed_s = embedding_seconds(log)
    return {
        "wall_s": round(wall, 3),
        "images_per_s": round(args.images / wall, 1),
        "embedding_s": embed_s,
        "embedding_images_per_s": round(args.images / embed_s, 1) if embed_s else None,
    }


def model_flags(arch: str) -> list[str]:
    """A seeded random-init model of `arch` (speed does not depend on the weights)."""
    slug = arch.lower().replace("/", "-") + "-random"
    return ["--model", slug, "--arch", arch, "--pretrained", "None"]


def sharded(args: argparse.Namespace, project: Path, out: str) -> dict:
    """Every shard in turn, then the join into `out`."""
    shards = []
    for k in range(args.shards):
        part = f"out/parts/{k}"
        wall = job(project, embed_argv(args, part, k), project / "logs" / f"shard-{k}.log")
        manifest = json.loads((project / part / "shard.json").read_text())
        entry = next(iter(manifest["sets"].values()))
        shards.append(
            {"shard": k, "rows": [entry["start"], entry["stop"]], "wall_s": round(wall, 3)}
        )
    join = ["embed-join", "--parts-dir", "out/parts", "--shards", str(args.shards), "--out", out]
    join_s = job(project, join, project / "logs" / "join.log")
    shards_s = sum(s["wall_s"] for s in shards)
    return {
        "shards": shards,
        "shards_wall_s": round(shards_s, 3),
        "join_wall_s": round(join_s, 3),
        "total_wall_s": round(shards_s + join_s, 3),
        "images_per_s": round(args.images / (shards_s + join_s), 1),
    }


# ----------------------------------------------------------------------------- the comparison


def digests(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def compare(one: Path, joined: Path) -> dict:
    """Every file's sha256 in both folders; the embeddings' max |diff| where they differ."""
    ours, theirs = digests(joined), digests(one)
    differing = sorted(
        name for name in ours.keys() | theirs.keys() if ours.get(name) != theirs.get(name)
    )
    worst = None
    for name in differing:
        if name.endswith(".npy") and name in ours and name in theirs:
            diff = float(np.abs(np.load(joined / name) - np.load(one / name)).max())
            worst = diff if worst is None else max(worst, diff)
    return {
        "files": len(theirs),
        "identical": not differing,
        "differing_files": differing,
        "max_abs_diff_embeddings": worst,
    }


def git_commit() -> str | None:
    done = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    return done.stdout.strip() if done.returncode == 0 else None


def provenance(args: argparse.Namespace, argv: list[str]) -> dict:
    import torch

    from vlstress.provenance import package_versions

    cuda = args.device.startswith("cuda")
    return {
        "torch": torch.__version__,
        "cuda": torch.version.cuda if cuda else None,
        "device_name": torch.cuda.get_device_name(args.device) if cuda else synthetic.cpu_model(),
        "cpu_count": os.cpu_count(),
        "git_commit": git_commit(),
        "command": shlex.join(["python", "benchmarks/bench_shards.py", *argv]),
        "packages": package_versions(),
    }


# ----------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", default="ViT-B-32", help="open_clip architecture (random init)")
    parser.add_argument("--images", type=int, default=50_000, help="JPEGs in the test set")
    parser.add_argument("--distinct", type=int, default=256, help="distinct pictures among them")
    parser.add_argument("--shards", type=int, default=4, help="S, the shards of the sharded run")
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N")
    parser.add_argument("--workers", type=int, default=8, help="image decoding workers per job")
    parser.add_argument(
        "--batch-size",
        type=int,
        default=None,
        help="default: the params' embed.cuda_batch_size on CUDA, embed.batch_size on the CPU",
    )
    parser.add_argument("--seed", type=int, default=0, help="of the pictures and the random init")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="the scratch project (default: a temp folder; its test set is reused)",
    )
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/bench_shards.json")
    args = parser.parse_args(argv)

    from vlstress.embedding.models import resolve_device
    from vlstress.io import write_json

    args.device = resolve_device(args.device)
    if args.batch_size is None:
        embed = yaml.safe_load((ROOT / "params.yaml").read_text())["embed"]
        args.batch_size = embed[
            "cuda_batch_size" if args.device.startswith("cuda") else "batch_size"
        ]
    project = args.data_dir or Path(tempfile.gettempdir()) / f"vlstress-bench-shards-{args.images}"
    build_testset(
        project / "data/testsets" / TESTSET, args.images, min(args.distinct, args.images), args.seed
    )
    write_params(project)
    shutil.rmtree(project / "out", ignore_errors=True)  # every run embeds from scratch
    (project / "logs").mkdir(exist_ok=True)

    # one job writes out/zeroshot, moved aside for the join to write there: same sidecar commands
    one = one_job(args, project, "out/zeroshot")
    os.replace(project / "out/zeroshot", project / "out/one")
    split = sharded(args, project, "out/zeroshot")
    split["overhead_vs_one_job_s"] = round(split["total_wall_s"] - one["wall_s"], 3)
    result = {
        "benchmark": "embedding-shards",
        "images": args.images,
        "distinct_images": min(args.distinct, args.images),
        "image_size": list(SIZE),
        "jpeg_quality": synthetic.QUALITY,
        "model": f"{args.arch}, random init",
        "seed": args.seed,
        "device": args.device,
        "batch_size": args.batch_size,
        "workers": args.workers,
        "shards": args.shards,
        "one_job": one,
        "sharded": split,
        "joined_vs_one_job": compare(project / "out/one", project / "out/zeroshot"),
        "provenance": provenance(args, argv),
    }
    report(result)
    write_json(args.out, result)
    print(f"wrote {args.out}")
    return 0


def report(result: dict) -> None:
    one, split, same = result["one_job"], result["sharded"], result["joined_vs_one_job"]
    print(
        f"\n{result['images']} JPEGs {result['image_size'][0]}x{result['image_size'][1]}, "
        f"{result['model']} on {result['device']}, batch {result['batch_size']}, "
        f"{result['workers']} workers\n"
    )
    print("| run | rows | wall s | images/s |\n|---|---|---:|---:|")
    print(f"| one job | 0..{result['images']} | {one['wall_s']:.2f} | {one['images_per_s']:.1f} |")
    for s in split["shards"]:
        print(f"| shard {s['shard']} | {s['rows'][0]}..{s['rows'][1]} | {s['wall_s']:.2f} | |")
    print(f"| join | | {split['join_wall_s']:.2f} | |")
    print(f"| shards + join | | {split['total_wall_s']:.2f} | {split['images_per_s']:.1f} |")
    if one["embedding_s"]:
        print(f"\none job's embedding pass alone: {one['embedding_s']:.2f} s")
    print(f"sharded overhead over one job: {split['overhead_vs_one_job_s']:.2f} s")
    verdict = "yes" if same["identical"] else f"NO ({', '.join(same['differing_files'])})"
    print(f"joined folder byte-identical to the one job's ({same['files']} files): {verdict}")


if __name__ == "__main__":
    sys.exit(main())
