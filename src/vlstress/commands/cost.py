"""`vlstress cost`: price the grid of a params file before running it (it only plans: no model,
no torch).

Per suite, the images (and texts) each model embeds; per model and for all of them, GPU-hours at
the rates measured by `benchmarks/bench_embedding.py` (scaled by architecture with open_clip's
GFLOPs table); the shared CPU work (corruptions, typographic copy, image variants, caption sets)
and GPU jobs (EI scorer, fine-tuning); disk for the embeddings; and the wall time on a SLURM
cluster of `--gpus` GPUs and `--cpus` cores. A set's size is counted from its built manifest or
its folder when they are there, else it is the published size of its kind, said so. Markdown on
stdout, or `--json`. The model behind the figures: `vlstress.cost.estimate`, with each suite's
`pricing.py` (`Suite.pricing`) for its own work; docs/throughput.md, "Cost model".

    vlstress cost                                              # params.yaml, 8 GPUs
    vlstress cost --params params.paper-grid.yaml --gpus 16    # the papers' pool of 255 models
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from vlstress.argtypes import positive_int

if TYPE_CHECKING:
    from vlstress.cost.pricing import Hook


def _size(text: str) -> tuple[str, int]:
    name, sep, count = text.partition("=")
    if not sep or not name.strip() or not count.strip().isdigit() or int(count) <= 0:
        raise argparse.ArgumentTypeError(f"expected NAME=IMAGES (a positive integer), got {text!r}")
    return name.strip(), int(count)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from vlstress.cost.rates import DEFAULT_RATE_FILE

    parser.add_argument(
        "--params",
        action="append",
        type=Path,
        help="params file(s), merged in order (default: params.yaml)",
    )
    parser.add_argument(
        "--gpus", type=positive_int, default=8, help="GPUs of the cluster (default 8)"
    )
    parser.add_argument(
        "--cpus",
        type=positive_int,
        default=16,
        help="CPU cores for the shared CPU work (default 16: one GPU node like the measured one)",
    )
    parser.add_argument(
        "--rate-file",
        type=Path,
        default=DEFAULT_RATE_FILE,
        help="a benchmarks/bench_embedding.py result; the other benchmark results are read "
        f"beside it when there (default {DEFAULT_RATE_FILE})",
    )
    parser.add_argument(
        "--size",
        action="append",
        type=_size,
        default=[],
        metavar="NAME=IMAGES",
        help="the image count of a test or OOD set that is not built and has no published size",
    )
    parser.add_argument(
        "--gflops",
        action="append",
        default=[],
        metavar="ARCH=IMAGE,TEXT,DIM",
        help="GFLOPs per image and per caption and embedding width of an architecture missing "
        "from open_clip's profile table",
    )
    parser.add_argument(
        "--project",
        type=Path,
        default=Path("."),
        help="the project folder whose data/ holds built sets (default: here)",
    )
    parser.add_argument("--json", action="store_true", help="JSON on stdout instead of Markdown")


def run(args: argparse.Namespace) -> None:
    from vlstress.cost import estimate, profile, rates, report
    from vlstress.embedding.kinds import IMAGE_TEXT_KINDS
    from vlstress.params import Params
    from vlstress.suites import registry

    files = args.params or [Path("params.yaml")]
    params = Params.load(files)
    extra = {cost.arch: cost for cost in map(profile.parse_override, args.gflops)}
    extra.update(counted_timm_archs(params.values, extra))
    extra.update(counted_open_clip_archs(params.values, extra))
    found = estimate.estimate(
        params.values,
        params.on,
        rates.load(args.rate_file),
        args.gpus,
        args.cpus,
        project=args.project,
        given=dict(args.size),
        extra_archs=extra,
        text_suites=frozenset(
            suite.name
            for suite in registry.suites()
            if any(set(stage.model_kinds or ()) == set(IMAGE_TEXT_KINDS) for stage in suite.stages)
        ),
        hooks=pricing_hooks(),
    )
    title = " + ".join(str(f) for f in files)
    jobs = job_requests(params.values)
    if args.json:
        print(json.dumps({**report.as_json(found, title), "jobs": jobs}, indent=2))
    else:
        print(report.markdown(found, title) + report.jobs_markdown(jobs), end="")


def job_requests(values) -> dict:
    """What the workflow's jobs ask the scheduler for (`vlstress.pipeline.resources`): the longest
    job of each priced stage, and the cluster block they follow."""
    from dataclasses import asdict

    from vlstress.pipeline import resources

    pricer = resources.job_pricer(dict(values))
    rows = resources.longest_jobs(dict(values), pricer)
    return {
        "cluster": asdict(pricer.cluster),
        "unpriced": list(pricer.unpriced),
        "why": pricer.why,
        "shards": resources.fewest_shards(dict(values), pricer),
        "stages": [{**row, "request": asdict(row["request"])} for row in rows],
    }


def pricing_hooks() -> list[Hook]:
    """The suites' pricing hooks (`Suite.pricing`) in registry order, which puts every suite
    after those it requires (the zero-shot suite before the suites that read its test sets)."""
    from vlstress.cost.pricing import Hook
    from vlstress.suites import registry

    return [
        Hook(suite.name, suite.pricing, suite.always)
        for suite in registry.suites()
        if suite.pricing
    ]


def counted_timm_archs(values, known) -> dict:
    """The figures of the timm classifiers of the params that the cost table lacks, counted on the
    meta device (this imports timm and torch; the table's architectures need neither)."""
    from vlstress.cost import profile
    from vlstress.embedding.kinds import TIMM_PREFIX

    archs = {
        str((entry or {}).get("arch"))
        for entry in (values.get("models") or {}).values()
        if str((entry or {}).get("arch")).startswith(TIMM_PREFIX)
    }
    missing = sorted(archs - set(profile.TIMM_PROFILE) - set(known))
    if not missing:
        return {}
    from vlstress.embedding.timm_models import count_gflops

    return {arch: profile.timm_arch(arch, *count_gflops(arch)) for arch in missing}


def counted_open_clip_archs(values, known) -> dict:
    """The figures of the open_clip architectures of the params that the cost table lacks, counted
    on the meta device (`vlstress.pool.gflops`; imports torch and open_clip). A hub repository
    (`hf-hub:...`) is left to the table or --gflops."""
    from vlstress.cost import profile
    from vlstress.embedding.kinds import model_kind

    archs = {
        str((entry or {}).get("arch"))
        for entry in (values.get("models") or {}).values()
        if model_kind(str((entry or {}).get("arch"))) == "open_clip"
    }
    missing = sorted(
        arch for arch in archs - set(profile.PROFILE) - set(known) if not arch.startswith("hf-hub:")
    )
    from vlstress.embedding.models import known_architectures

    missing = [arch for arch in missing if arch in known_architectures()]  # else: named unknown
    if not missing:
        return {}
    from vlstress.pool import gflops

    return {arch: gflops.open_clip_arch(arch) for arch in missing}
