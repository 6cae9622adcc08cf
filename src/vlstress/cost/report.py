"""An estimate as Markdown tables (for people) and as JSON (for machines)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from vlstress.cost.estimate import HOUR, STARTUP, Estimate, rounds
from vlstress.cost.profile import SOURCE


def _h(seconds: float) -> str:
    hours = seconds / HOUR
    if hours == 0:
        return "0"
    if hours < 0.01:
        return "< 0.01"
    return f"{hours:,.2f}" if hours < 100 else f"{hours:,.0f}"


def _n(value: float) -> str:
    return f"{value:,.0f}"


def _bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1000
    raise AssertionError  # pragma: no cover


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], text: int = 1) -> list[str]:
    """A Markdown table: the first `text` columns and the last column when it is text (a
    source, a sum) left-aligned, the numbers right-aligned."""
    align = ["---"] * text + ["---:"] * (len(header) - text)
    if header[-1] in ("size from", "value"):
        align[-1] = "---"
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def markdown(est: Estimate, title: str) -> str:
    rates = est.rates
    n = len(est.models)
    per_arch: dict[str, list] = defaultdict(list)
    for model in est.models:
        per_arch[model.arch].append(model)
    lines = [
        f"# Cost of {title}: {n} models, {est.gpus} GPUs, {est.cpus} CPU cores",
        "",
        f"Rates measured on {rates.device} with {rates.reference_arch}: "
        f"{rates.images_per_s:,.0f} images/s, {rates.captions_per_s:,.0f} captions/s, "
        f"{rates.startup_s:g} s start-up per GPU job; other architectures scaled by GFLOPs "
        f"({SOURCE}), images capped at the data path's "
        f"{rates.data_path_images_per_s or rates.images_per_s:,.0f} images/s. Sources:",
        "",
    ]
    lines += [f"- {what}: {source}" for what, source in rates.sources.items()]
    lines += ["", "## Sets", ""]
    dataset = est.dataset
    rows = [
        [
            dataset.name,
            dataset.kind,
            _n(dataset.images),
            f"{_n(dataset.captions)} captions",
            dataset.source,
        ]
    ]
    rows += [
        [s.name, s.kind, _n(s.images), _n(s.classes), s.source + (f"; {s.note}" if s.note else "")]
        for s in est.sets
    ]
    lines += _table(["set", "kind", "images", "classes", "size from"], rows, text=2)
    lines += ["", "## Work per model, by suite", ""]
    rows = []
    for work in est.work:
        seconds = [m.gpu_s[work.suite] for m in est.models]
        rows.append(
            [
                work.suite,
                work.what + (" (upper bound)" if work.upper_bound else ""),
                _n(work.images),
                _n(work.image_passes),
                _n(work.texts),
                _h(sum(seconds) / n),
                _h(sum(seconds)),
            ]
        )
    jobs = sum(w.jobs for w in est.work)
    startup = sum(m.gpu_s[STARTUP] for m in est.models)
    rows.append(
        [
            STARTUP,
            f"{jobs} GPU jobs x {rates.startup_s:g} s",
            "",
            "",
            "",
            _h(startup / n),
            _h(startup),
        ]
    )
    rows.append(
        [
            "**total**",
            "",
            _n(sum(w.images for w in est.work)),
            _n(sum(w.image_passes for w in est.work)),
            _n(sum(w.texts for w in est.work)),
            f"**{_h(est.model_gpu_s / n)}**",
            f"**{_h(est.model_gpu_s)}**",
        ]
    )
    header = [
        "suite",
        "per model",
        "images",
        "image passes",
        "texts",
        "GPU-h per model (mean)",
        f"GPU-h, {n} models",
    ]
    lines += _table(header, rows, text=2)
    lines += ["", "## By architecture", ""]
    rows = []
    for arch, models in sorted(per_arch.items(), key=lambda item: -len(item[1])):
        total = sum(m.total_s for m in models)
        rows.append(
            [
                arch,
                _n(len(models)),
                f"{models[0].image_gflops:.4g}",
                _n(models[0].images_per_s),
                _n(models[0].captions_per_s)
                if math.isfinite(models[0].captions_per_s)
                else "no text tower",
                _h(total / len(models)),
                _h(total),
                _bytes(models[0].disk_bytes),
            ]
        )
    header = [
        "architecture",
        "models",
        "image GFLOPs",
        "images/s",
        "captions/s",
        "GPU-h per model",
        "GPU-h, all",
        "embeddings per model",
    ]
    lines += _table(header, rows)
    lines += ["", "## Shared work (once)", ""]
    rows = [[s.name, s.what, _h(s.cpu_s), _h(s.gpu_s)] for s in est.shared]
    rows.append(["**total**", "", f"**{_h(est.shared_cpu_s)}**", f"**{_h(est.shared_gpu_s)}**"])
    lines += _table(["work", "what", "CPU core-hours", "GPU-hours"], rows, text=2)
    makespan = est.makespan_s
    cpu_phase = est.shared_cpu_s / est.cpus
    lines += ["", "## Totals", ""]
    rows = [
        ["models", _n(n)],
        ["GPU-hours, model jobs", _h(est.model_gpu_s)],
        ["GPU-hours, shared jobs", _h(est.shared_gpu_s)],
        ["CPU core-hours, shared work", _h(est.shared_cpu_s)],
        [
            "embeddings on disk, float32 (float16)",
            f"{_bytes(est.disk_bytes)} ({_bytes(est.disk_bytes / 2)})",
        ],
        [
            f"wall time on {est.gpus} GPUs + {est.cpus} cores (h)",
            f"**{_h(est.wall_s)}** = {_h(cpu_phase)} CPU + {_h(est.shared_gpu_s)} shared GPU + "
            f"{_h(makespan)} models ({rounds(n, est.gpus)} rounds of {est.gpus})",
        ],
    ]
    lines += _table(["", "value"], rows, text=2)
    if est.notes:
        lines += [""] + [f"- {note}" for note in est.notes]
    return "\n".join(lines) + "\n"


def jobs_markdown(jobs: Mapping[str, Any]) -> str:
    """The longest job of each stage and what it asks the scheduler for (`vlstress cost`)."""
    cluster = jobs["cluster"]
    lines = [
        "",
        "## Jobs: what each asks the scheduler",
        "",
        f"Predicted on the reference GPU; each job asks for x{cluster['runtime_margin']:g} its "
        f"prediction, at least {cluster['min_job_minutes']} min (params `cluster`). The longest "
        "job of each stage:",
        "",
    ]
    rows = [
        [
            row["stage"],
            _n(row["jobs"]),
            row["model"] or row["item"] or "",
            f"{row['hours']:,.2f}",
            _n(row["request"]["runtime"]),
            _n(row["request"]["mem_mb"]),
            str(row["request"]["cpus_per_task"]),
            f"**{_n(row['over'])}**" if row["over"] else "0",
        ]
        for row in jobs["stages"]
    ]
    header = [
        "stage",
        "jobs",
        "longest: model or item",
        "predicted h",
        "asks: min",
        "MB",
        "CPUs",
        f"over {cluster['max_job_hours']:g} h",
    ]
    lines += _table(header, rows, text=3)
    over = [row for row in jobs["stages"] if row["over"]]
    if over or jobs["unpriced"] or jobs["why"]:
        lines.append("")
    if jobs["why"]:
        lines.append(
            f"- no job is priced ({jobs['why']}): each asks for {cluster['max_job_hours']:g} h "
            f"and {cluster['unpriced_mem_mb']:,} MB"
        )
    if over:
        lines += [
            f"- {sum(row['over'] for row in over):,} jobs are predicted over "
            f"cluster.max_job_hours ({cluster['max_job_hours']:g} h): "
            + ", ".join(f"{row['stage']} ({_n(row['over'])})" for row in over),
        ]
        lines += [
            f"- `{param}: {shards}` splits them into jobs under {cluster['max_job_hours']:g} h"
            for param, shards in jobs["shards"].items()
        ]
    if jobs["unpriced"]:
        lines += [
            f"- not priced, so they ask for {cluster['max_job_hours']:g} h and "
            f"{cluster['unpriced_mem_mb']:,} MB: {', '.join(jobs['unpriced'])}"
        ]
    return "\n".join(lines) + "\n"


def as_json(est: Estimate, title: str) -> dict[str, Any]:
    n = len(est.models)
    return {
        "params": title,
        "models": n,
        "gpus": est.gpus,
        "cpus": est.cpus,
        "rates": asdict(est.rates),
        "dataset": asdict(est.dataset),
        "sets": [asdict(s) for s in est.sets],
        "work": [
            {
                **asdict(w),
                "image_passes": w.image_passes,
                "gpu_h_per_model_mean": sum(m.gpu_s[w.suite] for m in est.models) / n / HOUR,
                "gpu_h_all_models": sum(m.gpu_s[w.suite] for m in est.models) / HOUR,
            }
            for w in est.work
        ],
        "startup_gpu_h_all_models": sum(m.gpu_s[STARTUP] for m in est.models) / HOUR,
        "shared": [
            {"name": s.name, "what": s.what, "cpu_h": s.cpu_s / HOUR, "gpu_h": s.gpu_s / HOUR}
            for s in est.shared
        ],
        "per_model": [
            {
                "model": m.slug,
                "arch": m.arch,
                "images_per_s": m.images_per_s,
                # None: no text tower (a timm classifier)
                "captions_per_s": m.captions_per_s if math.isfinite(m.captions_per_s) else None,
                "gpu_h": m.total_s / HOUR,
                "gpu_h_by_suite": {k: v / HOUR for k, v in m.gpu_s.items()},
                "embedding_rows": m.rows,
                "disk_bytes_float32": m.disk_bytes,
            }
            for m in est.models
        ],
        "totals": {
            "gpu_h_models": est.model_gpu_s / HOUR,
            "gpu_h_shared": est.shared_gpu_s / HOUR,
            "cpu_h_shared": est.shared_cpu_s / HOUR,
            "disk_bytes_float32": est.disk_bytes,
            "disk_bytes_float16": est.disk_bytes // 2,
            "wall_h": est.wall_s / HOUR,
            "wall_h_cpu_phase": est.shared_cpu_s / est.cpus / HOUR,
            "wall_h_models": est.makespan_s / HOUR,
            "rounds": rounds(n, est.gpus),
        },
        "notes": est.notes,
    }
