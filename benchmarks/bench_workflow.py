"""Benchmark: the whole RoCOCO workflow for one model on a synthetic dataset of the real shape.

Generates (once, cached; the generator of bench_embedding.py) N JPEGs at COCO resolution with
5 captions each, written as a COCO-format folder, and runs the project's own workflow on it
(`snakemake --cores C` in a copy of the checkout: download, prepare, EI scores, the four
caption sets, mixed and patched images, every embedding and metric, summary, figures) with one
seeded random-init model (speed does not depend on the weights). Suites other than the two
RoCOCO ones are off. Then, from the rules' own `benchmark:` files and the arrays they wrote:

- wall time per stage (sum over its jobs, jobs, slowest job);
- items/s of the model's one embedding job (`embed_retrieval`), end to end and without the
  per-job fixed cost (start-up: imports, model creation; estimated as the median model-card
  job, which does exactly that and nothing else), and images/s and captions/s of its
  encoding passes, from the per-set times in its log;
- the share of that fixed cost in the model stages' time (the issue's 10% threshold);
- with `--add-seed`: one more image-variant seed and the plain rerun (wall time, jobs, sets
  embedded and reused by the model's one embedding job);
- with `--baseline`: the same workflow with `embed.workers: 0` (decoding on the step's main
  thread, as before the workers existed) in the same process, and the ratio;
- on CUDA: mean GPU utilisation during the run (nvidia-smi / torch.cuda.utilization);
- a cost model: the time of M models on one node and on a SLURM cluster with K devices,
  from the measured per-model and shared stage times (docs/throughput.md explains it).

Writes benchmarks/results/bench_workflow[-<tag>].json and prints Markdown tables.

    python benchmarks/bench_workflow.py --images 200             # scaled down (2 CPU cores)
    python benchmarks/bench_workflow.py --images 5000 --cores 16  # the real scale (GPU node)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import bench_embedding as synthetic  # noqa: E402  (the same synthetic photos and captions)

ROCOCO_SUITES = ("rococo_text", "rococo_image")
SHARED_STAGES = {
    "check_params",
    "download",
    "prepare",
    "nlp_data",
    "text_variants",
    "image_variants",
    "text_stats",
    "scorer_card",
    "ei_scores",
    "summarize",
    "retrieval_figures",
    "retrieval_tables",
}  # run once, whatever the number of models


def coco_folder(folder: Path, n: int, seed: int) -> tuple[Path, Path, str]:
    """The synthetic photos as a COCO-format folder: images/ and captions.json (5 captions per
    image)."""
    paths, captions, source = synthetic.dataset(folder / "images", n, seed)
    captions_json = folder / "captions.json"
    images = [{"id": i, "file_name": Path(p).name} for i, p in enumerate(paths)]
    per = synthetic.CAPTIONS_PER_IMAGE
    annotations = [{"image_id": i // per, "id": i, "caption": c} for i, c in enumerate(captions)]
    captions_json.write_text(json.dumps({"images": images, "annotations": annotations}))
    return folder / "images", captions_json, source


def copy_checkout(dest: Path) -> Path:
    """The tracked files of this checkout (its results left out: the run makes its own)."""
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    for name in filter(None, (f.decode() for f in files)):
        if name.startswith(("results/", "data/")) or name == "dvc.lock":
            continue
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    return dest


def bench_params(
    params: dict, images: Path, captions: Path, args: argparse.Namespace, workers
) -> dict:
    params["dataset"] = {
        **{key: None for key in params["dataset"]},
        "name": "synthetic",
        "kind": "coco-dir",
        "images": str(images),
        "captions": str(captions),
    }
    slug = f"{args.model.lower()}-random"
    params["models"] = {slug: {"arch": args.model, "pretrained": None}}
    params["ei"]["scorer"] = {"slug": f"scorer-{slug}", "arch": args.model, "pretrained": None}
    params["suites"] = {name: name in ROCOCO_SUITES for name in params["suites"]}
    params["embed"].update(
        device=args.device,
        threads=args.threads,
        workers=workers,
        precision=args.precision,
        decoder=args.decoder,
    )
    if args.batch_size:
        params["embed"]["batch_size"] = args.batch_size
    return params


def workflow_env() -> dict[str, str]:
    """The environment of the workflow commands: this interpreter's `vlstress`, `snakemake` first
    on PATH."""
    return {
        **os.environ,
        "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
    }


def run_workflow(
    workdir: Path, images: Path, captions: Path, args: argparse.Namespace, workers, sampler
) -> dict:
    """One full Snakemake run in a fresh copy; its per-job benchmark rows and output shapes."""
    shutil.rmtree(workdir, ignore_errors=True)
    repo = copy_checkout(workdir)
    params = bench_params(
        yaml.safe_load((repo / "params.yaml").read_text()), images, captions, args, workers
    )
    (repo / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    env = workflow_env()
    subprocess.run(
        ["vlstress", "pipeline", "render"], cwd=repo, env=env, check=True, capture_output=True
    )
    start = time.perf_counter()
    with sampler:
        done = subprocess.run(
            ["snakemake", "--cores", str(args.cores)],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
        )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"workflow failed in {repo}:\n{done.stderr[-5000:]}")
    jobs = []
    for tsv in sorted((repo / "logs" / "benchmarks").rglob("*.tsv")):
        rows = [line.split("\t") for line in tsv.read_text().splitlines()]
        record = dict(zip(rows[0], rows[1]))
        name = tsv.relative_to(repo / "logs" / "benchmarks").with_suffix("").as_posix()
        jobs.append(
            {
                "stage": name.split("/")[0],
                "job": name,
                "s": float(record["s"]),
                "cpu_s": float(record.get("cpu_time") or 0),
            }
        )
    rows = {
        npy.relative_to(repo / "results" / "embeddings").as_posix(): int(
            np.load(npy, mmap_mode="r").shape[0]
        )
        for npy in (repo / "results" / "embeddings").rglob("*.npy")
    }
    return {
        "wall_s": round(wall, 2),
        "jobs": jobs,
        "rows": rows,
        "set_times": set_times(repo),
        "gpu_util_mean": sampler.mean,
        "params": params,
        "repo": str(repo),
    }


COUNTS = re.compile(r"(?P<embedded>\d+) set\(s\) embedded, (?P<reused>\d+) reused")


def add_a_seed(repo: Path, args: argparse.Namespace) -> dict:
    """After a full run: one more image-variant seed in params.yaml, and the plain rerun.

    Wall time, the jobs that ran, and what the model's embedding job embedded and reused: the
    incremental rerun that one job per model must keep cheap."""
    params_path = repo / "params.yaml"
    params = yaml.safe_load(params_path.read_text())
    seed = max(params["image_variants"]["seeds"]) + 1
    params["image_variants"]["seeds"].append(seed)
    params_path.write_text(yaml.safe_dump(params, sort_keys=False))
    env = workflow_env()
    start = time.perf_counter()
    done = subprocess.run(
        ["snakemake", "--cores", str(args.cores)], cwd=repo, env=env, capture_output=True, text=True
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"rerun after adding seed {seed} failed in {repo}:\n{done.stderr[-5000:]}")
    ran = re.findall(r"^(?:local)?rule (\w+):", done.stdout + done.stderr, flags=re.M)
    counts = [
        m.groupdict()
        for log in sorted((repo / "logs" / EMBED_STAGE).rglob("*.log"))
        for m in COUNTS.finditer(log.read_text())
    ]
    return {
        "edit": f"image_variants.seeds + [{seed}]",
        "wall_s": round(wall, 2),
        "jobs": len(ran),
        "jobs_per_stage": {name: ran.count(name) for name in sorted(set(ran))},
        "embedded": sum(int(c["embedded"]) for c in counts),
        "reused": sum(int(c["reused"]) for c in counts),
    }


def stage_table(run: dict) -> list[dict]:
    from vlstress.pipeline import STAGES

    gpu = {stage.name for stage in STAGES if stage.gpu}
    table = {}
    for job in run["jobs"]:
        entry = table.setdefault(
            job["stage"],
            {
                "stage": job["stage"],
                "jobs": 0,
                "s": 0.0,
                "max_s": 0.0,
                "model": job["stage"] in gpu,
            },
        )
        entry["jobs"] += 1
        entry["s"] = round(entry["s"] + job["s"], 2)
        entry["max_s"] = max(entry["max_s"], job["s"])
    return sorted(table.values(), key=lambda e: -e["s"])


EMBED_STAGE = "embed_retrieval"  # every retrieval set of a model, in one job
# what the embedding job logs for each set it embeds (vlstress.embedding.sets.write)
SET_LINE = re.compile(
    r"vlstress\.embedding\.sets: \S+ \((?P<kind>[a-z-]+)\): "
    r"(?P<rows>\d+) rows embedded in (?P<s>[0-9.]+) s"
)


def set_times(repo: Path) -> list[dict]:
    """(kind, rows, seconds) of every set the embedding jobs embedded, from their logs."""
    found = []
    for log in sorted((repo / "logs" / EMBED_STAGE).rglob("*.log")):
        found += [
            {"kind": m["kind"], "rows": int(m["rows"]), "s": float(m["s"])}
            for m in SET_LINE.finditer(log.read_text(errors="replace"))
        ]
    return found


def throughput(run: dict, fixed_s: float) -> list[dict]:
    """Items/s of the model's embedding job: end to end per job (with and without the fixed
    start-up), and per kind of set from the job's own log (the encoding passes alone, reading and
    decoding included)."""
    jobs = [job for job in run["jobs"] if job["stage"] == EMBED_STAGE]
    if not jobs:
        return []
    text = [
        name for name in run["rows"] if name.endswith("/texts.npy") or "/text_variants/" in name
    ]
    captions = sum(run["rows"][name] for name in text)
    images = sum(n for name, n in run["rows"].items() if "/retrieval/" in name and name not in text)
    seconds = sum(job["s"] for job in jobs)
    work = max(seconds - fixed_s * len(jobs), 1e-9)
    out = [
        {
            "stage": EMBED_STAGE,
            "unit": "images + captions",
            "items": images + captions,
            "jobs": len(jobs),
            "s": round(seconds, 2),
            "per_s": round((images + captions) / seconds, 1),
            "per_s_without_startup": round((images + captions) / work, 1),
        }
    ]
    for kind, unit in (("image", "images"), ("text", "captions")):
        sets = [entry for entry in run.get("set_times", []) if entry["kind"].startswith(kind)]
        if sets:
            rows, spent = sum(e["rows"] for e in sets), sum(e["s"] for e in sets)
            out.append(
                {
                    "stage": f"{EMBED_STAGE} ({unit}, from its log)",
                    "unit": unit,
                    "items": rows,
                    "jobs": len(jobs),
                    "s": round(spent, 2),
                    "per_s": round(rows / max(spent, 1e-9), 1),
                    "per_s_without_startup": round(rows / max(spent, 1e-9), 1),
                }
            )
    return out


def cost_model(
    jobs: list[dict],
    measured_images: int,
    images: int,
    startup: dict[str, float],
    models: int,
    devices: int,
) -> dict:
    """Hours for `models` models on `images` images: shared stages once, model stages per model.

    Each job's time beyond its start-up is scaled linearly from the measured image count (the
    work of every stage grows with the images and their 5 captions; retrieval's similarity
    matrices grow faster, but are seconds at 5,000 images: bench_retrieval.py). Start-up stays.
    On a cluster, whole models are spread over the devices (a model's jobs are independent of
    other models'); the shared stages run once before them.
    """

    def scaled(job: dict) -> float:
        fixed = min(startup.get(job["stage"], startup["other"]), job["s"])
        return fixed + (job["s"] - fixed) * images / measured_images

    shared = sum(scaled(job) for job in jobs if job["stage"] in SHARED_STAGES)
    per_model = sum(scaled(job) for job in jobs if job["stage"] not in SHARED_STAGES)
    startup_per_model = sum(
        min(startup.get(job["stage"], startup["other"]), job["s"])
        for job in jobs
        if job["stage"] not in SHARED_STAGES
    )
    return {
        "images": images,
        "models": models,
        "devices": devices,
        "shared_s": round(shared, 1),
        "per_model_s": round(per_model, 1),
        "startup_share_per_model": round(startup_per_model / per_model, 3),
        "one_device_h": round((shared + models * per_model) / 3600, 2),
        "cluster_h": round((shared + -(-models // devices) * per_model) / 3600, 2),
    }


def startups(result: dict) -> dict[str, float]:
    """Start-up per job: the model-card time for model stages, the quickest job's for the rest."""
    model_stages = {e["stage"] for e in result["stages"] if e["model"]} | {
        "model_card",
        "scorer_card",
    }
    quickest = min(job["s"] for job in result["run"]["jobs"])
    return {**{stage: result["fixed_s"] for stage in model_stages}, "other": quickest}


def cost_models(result: dict, counts: str, devices: int, images: str) -> list[dict]:
    return [
        cost_model(
            result["run"]["jobs"], result["images"], int(n), startups(result), int(m), devices
        )
        for n in images.split(",")
        for m in counts.split(",")
    ]


def markdown(result: dict) -> str:
    lines = [
        f"## Workflow of one {result['model']} (random-init) on {result['images']} images, "
        f"{result['cores']} cores, {result['device']}",
        "",
        f"wall {result['run']['wall_s']} s"
        + (
            f"; GPU utilisation {result['run']['gpu_util_mean']}%"
            if result["run"]["gpu_util_mean"] is not None
            else ""
        ),
        "",
        "| stage | jobs | s (sum) | slowest job s | model stage |",
        "|---|---:|---:|---:|---|",
    ]
    lines += [
        f"| {e['stage']} | {e['jobs']} | {e['s']} | {e['max_s']} | {'yes' if e['model'] else ''} |"
        for e in result["stages"]
    ]
    lines += [
        "",
        f"fixed cost per model job (median model-card job): {result['fixed_s']} s; "
        f"share of the model stages' time: {result['fixed_share']:.0%}",
        "",
        "| stage | items | jobs | items/s | items/s without start-up |",
        "|---|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {t['stage']} | {t['items']} {t['unit']} | {t['jobs']} | {t['per_s']} "
        f"| {t['per_s_without_startup']} |"
        for t in result["throughput"]
    ]
    if "add_a_seed" in result:
        a = result["add_a_seed"]
        lines += [
            "",
            f"rerun after `{a['edit']}`: wall {a['wall_s']} s, {a['jobs']} jobs; "
            f"the embedding job embedded {a['embedded']} set(s), reused {a['reused']}",
        ]
    if "baseline" in result:
        b = result["baseline"]
        lines += [
            "",
            f"baseline (embed.workers 0): wall {b['wall_s']} s; "
            f"workers {result['workers']}: {result['run']['wall_s']} s "
            f"= {b['wall_s'] / result['run']['wall_s']:.2f}x",
        ]
    lines += [
        "",
        "| images | models | devices | shared s | per model s | start-up share "
        "| one device h | cluster h |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {c['images']} | {c['models']} | {c['devices']} | {c['shared_s']} "
        f"| {c['per_model_s']} | {c['startup_share_per_model']:.0%} "
        f"| {c['one_device_h']} | {c['cluster_h']} |"
        for c in result["cost_model"]
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--images", type=int, default=5000, help="synthetic test images (the real benchmark: 5000)"
    )
    parser.add_argument("--model", default="ViT-B-32", help="open_clip architecture (random init)")
    parser.add_argument("--cores", type=int, default=os.cpu_count(), help="snakemake --cores")
    parser.add_argument(
        "--threads", type=int, default=2, help="embed.threads (torch CPU threads per model step)"
    )
    parser.add_argument("--device", default="auto", help="embed.device")
    parser.add_argument(
        "--batch-size", type=int, default=None, help="embed.batch_size (default: params.yaml)"
    )
    parser.add_argument(
        "--workers", default=None, help="embed.workers (default: null = the job's free cores)"
    )
    parser.add_argument("--precision", default="fp32", choices=["fp32", "amp"])
    parser.add_argument(
        "--decoder", default="pil", choices=["pil", "nvjpeg"], help="embed.decoder (nvjpeg: CUDA)"
    )
    parser.add_argument(
        "--baseline", action="store_true", help="also run with embed.workers 0 and compare"
    )
    parser.add_argument("--seed", type=int, default=0, help="synthetic data seed")
    parser.add_argument(
        "--add-seed",
        action="store_true",
        help="then add an image-variant seed and time the incremental rerun",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path(tempfile.gettempdir()) / "vlstress-bench-data",
        help="synthetic data cache",
    )
    parser.add_argument(
        "--workdir",
        type=Path,
        default=Path(tempfile.gettempdir()) / "vlstress-bench-workflow",
        help="where the runs happen",
    )
    parser.add_argument("--cost-models", default="1,10,84", help="model counts of the cost model")
    parser.add_argument(
        "--cost-devices", type=int, default=8, help="devices of the cluster in the cost model"
    )
    parser.add_argument(
        "--cost-images",
        default="200,5000",
        help="image counts of the cost model (scaled from the measured run)",
    )
    parser.add_argument(
        "--cost-only",
        type=Path,
        default=None,
        help="recompute the cost model of a result file, run nothing",
    )
    parser.add_argument("--tag", default="", help="suffix of the result file")
    args = parser.parse_args(argv)
    if args.cost_only:
        result = json.loads(args.cost_only.read_text())
        result["cost_model"] = cost_models(
            result, args.cost_models, args.cost_devices, args.cost_images
        )
        write(result, args.cost_only)
        return 0
    workers = None if args.workers in (None, "null", "None") else int(args.workers)

    import torch

    from vlstress import provenance

    device = (
        args.device if args.device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
    )
    images, captions, caption_source = coco_folder(
        args.cache / f"coco-{args.images}-{args.seed}", args.images, args.seed
    )
    run = run_workflow(
        args.workdir / "run", images, captions, args, workers, synthetic.GpuSampler(device)
    )
    stages = stage_table(run)
    cards = [job["s"] for job in run["jobs"] if job["stage"] in ("model_card", "scorer_card")]
    fixed = round(statistics.median(cards), 2)
    model_stages = {e["stage"] for e in stages if e["model"]}
    model_jobs = [job for job in run["jobs"] if job["stage"] in model_stages]
    fixed_share = fixed * len(model_jobs) / max(sum(job["s"] for job in model_jobs), 1e-9)
    result = {
        "benchmark": "bench_workflow",
        "model": args.model,
        "images": args.images,
        "captions": args.images * synthetic.CAPTIONS_PER_IMAGE,
        "caption_source": caption_source,
        "cores": args.cores,
        "threads": args.threads,
        "device": device,
        "cpu": synthetic.cpu_model(),
        "gpu": torch.cuda.get_device_name(0) if device.startswith("cuda") else None,
        "workers": workers,
        "precision": args.precision,
        "decoder": args.decoder,
        "fixed_s": fixed,
        "fixed_share": round(fixed_share, 4),
        "stages": stages,
        "throughput": throughput(run, fixed),
        "run": {key: run[key] for key in ("wall_s", "gpu_util_mean", "jobs", "rows", "set_times")},
        # other processes on the machine
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "provenance": provenance.build(
            "bench-workflow",
            {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
            seed=args.seed,
            device=device,
            packages=("snakemake",),
        ),
    }
    if args.add_seed:
        result["add_a_seed"] = add_a_seed(Path(run["repo"]), args)
    if args.baseline:
        base = run_workflow(
            args.workdir / "baseline", images, captions, args, 0, synthetic.GpuSampler(device)
        )
        result["baseline"] = {
            "wall_s": base["wall_s"],
            "stages": stage_table(base),
            "gpu_util_mean": base["gpu_util_mean"],
        }
        result["baseline_same_embeddings"] = all(
            np.array_equal(
                np.load(Path(run["repo"]) / "results" / "embeddings" / name),
                np.load(Path(base["repo"]) / "results" / "embeddings" / name),
            )
            for name in run["rows"]
        )
    result["cost_model"] = cost_models(
        result, args.cost_models, args.cost_devices, args.cost_images
    )
    write(result, HERE / "results" / f"bench_workflow{'-' + args.tag if args.tag else ''}.json")
    return 0


def write(result: dict, out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result, indent=2) + "\n")
    tmp.replace(out)
    print(markdown(result))
    print(f"\nwrote {out}")


if __name__ == "__main__":
    sys.exit(main())
