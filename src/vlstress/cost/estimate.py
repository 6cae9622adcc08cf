"""What a grid of params costs: per suite and per model, GPU-hours, CPU-hours, disk, wall time.

The params arrive as their merged mapping and the set of suites that are on (the caller reads
them with `vlstress.params`), with the suites' pricing hooks (`vlstress.cost.pricing`); nothing
here imports the stage declarations or a model library, and nothing here names a suite.
The model of the work mirrors what the steps do:

- Each suite prices its own work in its hook (`vlstress.suites.<suite>.pricing`, named by its
  declaration): the images and texts each model's jobs embed, the passes of its attacks (in
  clean forward passes), its GPU jobs, and the work done once for the whole grid.
- Time = image passes / images per s + texts / captions per s of the model's architecture, plus
  a start-up per GPU job. The rates are measured for one architecture (ViT-B-32) and scaled by
  GFLOPs (`vlstress.cost.profile`); a cheaper architecture is capped at the measured data path
  (decoding), which no model gets past.
- Shared work is done once: corrupting the test set, the typographic copy, mixing/patching the
  retrieval images, the caption sets and their statistics (CPU), the EI scorer and fine-tuning
  (GPU).
- Disk: every stored embedding row (images, captions, classifier rows, per-template rows) x the
  architecture's embedding width x 4 bytes (float32, as written; float16 halves it).
- Wall on a SLURM cluster of G GPUs and C CPU cores: the shared CPU work over C cores, then the
  shared GPU jobs, then the models' jobs, independent across models, packed on the G GPUs
  longest first (= ceil(models / G) x per-model time when every model costs the same). The
  phases are added, not overlapped: an upper bound on what Snakemake's scheduler does.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vlstress.cost import pricing, sizes
from vlstress.cost.pricing import Hook, Plan, Pricing, Shared, Work, block_of
from vlstress.cost.profile import ArchCost, arch_cost
from vlstress.cost.rates import Rates
from vlstress.embedding.kinds import LLAVA, model_kind
from vlstress.errors import VlstressError

BYTES_FLOAT32 = 4
HOUR = 3600.0
STARTUP = "start-up"


@dataclass(frozen=True)
class ModelCost:
    slug: str
    arch: str
    images_per_s: float
    captions_per_s: float
    gpu_s: Mapping[str, float]  # per suite, and the jobs' start-up
    rows: int  # embedding rows stored
    embed_dim: int
    image_gflops: float

    @property
    def total_s(self) -> float:
        return sum(self.gpu_s.values())

    @property
    def disk_bytes(self) -> int:
        return self.rows * self.embed_dim * BYTES_FLOAT32


@dataclass(frozen=True)
class Estimate:
    sets: list[sizes.SetSize]
    dataset: sizes.DatasetSize
    work: list[Work]
    shared: list[Shared]
    models: list[ModelCost]
    rates: Rates
    gpus: int
    cpus: int
    notes: list[str] = field(default_factory=list)

    @property
    def model_gpu_s(self) -> float:
        return sum(m.total_s for m in self.models)

    @property
    def shared_gpu_s(self) -> float:
        return sum(s.gpu_s for s in self.shared)

    @property
    def shared_cpu_s(self) -> float:
        return sum(s.cpu_s for s in self.shared)

    @property
    def makespan_s(self) -> float:
        return makespan([m.total_s for m in self.models], self.gpus)

    @property
    def wall_s(self) -> float:
        return self.shared_cpu_s / self.cpus + self.shared_gpu_s + self.makespan_s

    @property
    def disk_bytes(self) -> int:
        return sum(m.disk_bytes for m in self.models)


def makespan(times: Sequence[float], gpus: int) -> float:
    """Longest-first list scheduling of independent jobs on `gpus` devices: the finish time."""
    if gpus < 1:
        raise VlstressError(f"the number of GPUs must be at least 1, not {gpus}")
    loads = [0.0] * min(gpus, max(len(times), 1))
    for t in sorted(times, reverse=True):
        heapq.heapreplace(loads, loads[0] + t)
    return max(loads)


def arch_rates(arch: ArchCost, reference: ArchCost, rates: Rates) -> tuple[float, float]:
    """(images/s, captions/s) of an architecture: the measured rates x GFLOPs of the measured
    architecture / its GFLOPs, images capped at the measured data path."""
    images = rates.images_per_s * reference.image_gflops / arch.image_gflops
    if rates.data_path_images_per_s is not None:
        images = min(images, max(rates.data_path_images_per_s, rates.images_per_s))
    if not arch.text_gflops:  # no text tower (a timm classifier): it embeds no text
        return images, math.inf
    return images, rates.captions_per_s * reference.text_gflops / arch.text_gflops


def assistants(values: Mapping[str, Any]) -> tuple[str, ...]:
    """The models that generate answers (no embedding pass): not priced by the GFLOPs table."""
    models = values.get("models") or {}
    return tuple(
        sorted(
            slug
            for slug, entry in models.items()
            if model_kind(str((entry or {}).get("arch"))) == LLAVA
        )
    )


def plan(
    values: Mapping[str, Any],
    on: frozenset[str],
    rates: Rates,
    project: Path = Path("."),
    given: Mapping[str, int] | None = None,
    *,
    hooks: Sequence[Hook],
) -> Plan:
    """What the params ask for: sizes, work per model, shared work, each suite's priced by its
    hook (`hooks`, in order: a suite after those whose results it reads)."""
    found = Plan(sizes.dataset_size(block_of(values, "dataset"), project))
    context = Pricing(values, on, rates, found, project, dict(given or {}), assistants(values))
    pricing.run(hooks, context)
    return found


def estimate(
    values: Mapping[str, Any],
    on: frozenset[str],
    rates: Rates,
    gpus: int,
    cpus: int,
    project: Path = Path("."),
    given: Mapping[str, int] | None = None,
    extra_archs: Mapping[str, ArchCost] | None = None,
    text_suites: frozenset[str] = frozenset(),
    *,
    hooks: Sequence[Hook],
) -> Estimate:
    """The cost of every model of the params and of the shared work; `text_suites`, the suites a
    model without a text tower takes no part in (their stages' `model_kinds`); `hooks`, the
    suites' pricing hooks in order (`plan`)."""
    if gpus < 1:
        raise VlstressError(f"the number of GPUs must be at least 1, not {gpus}")
    if cpus < 1:
        raise VlstressError(f"the number of CPU cores must be at least 1, not {cpus}")
    models = block_of(values, "models")
    if not models:
        raise VlstressError("the params name no model")
    # an assistant is priced by its suite's hook (a note), not by the GFLOPs table
    generating = assistants(values)
    models = {slug: entry for slug, entry in models.items() if slug not in generating}
    reference = arch_cost(rates.reference_arch, extra_archs)
    archs = {
        slug: arch_cost(str((entry or {}).get("arch")), extra_archs)
        for slug, entry in models.items()
    }
    found = plan(values, on, rates, project, given, hooks=hooks)
    costs = []
    for slug, arch in archs.items():
        images_s, captions_s = arch_rates(arch, reference, rates)
        # a model without a text tower takes no part in the suites that need one (0 s there)
        work = [w for w in found.work if arch.text_gflops or w.suite not in text_suites]
        gpu_s = {w.suite: 0.0 for w in found.work}
        gpu_s.update({w.suite: w.image_passes / images_s + w.texts / captions_s for w in work})
        gpu_s[STARTUP] = sum(w.jobs for w in work) * rates.startup_s
        rows = sum(w.images + w.text_rows for w in work)  # a classifier map's rows are rows too
        costs.append(
            ModelCost(
                slug,
                arch.arch,
                images_s,
                captions_s,
                gpu_s,
                rows,
                arch.embed_dim,
                arch.image_gflops,
            )
        )
    shared = []
    for item in found.shared:
        if item.arch is not None:
            item = item.priced(
                *arch_rates(arch_cost(item.arch, extra_archs), reference, rates), rates.startup_s
            )
        shared.append(item)
    notes = list(found.notes)
    if any(w.upper_bound for w in found.work):
        notes.append(
            "an attack marked as an upper bound stops early on the images it fooled; the "
            "figure assumes it fools none"
        )
    busy = rates.gpu_utilisation_percent
    if busy and busy < 90 and any(m.images_per_s < rates.images_per_s for m in costs):
        notes.append(
            f"the measured path kept the GPU {busy:g}% busy (decoding bound): scaling its time by "
            f"GFLOPs prices larger architectures high, by up to {100 / busy:.1f}x for one whose "
            "forward is the bottleneck"
        )
    published = [s.name for s in found.sets.values() if s.published]
    if found.dataset.published:
        published.append(found.dataset.name)
    if published:
        notes.append(f"published sizes, not counted here: {', '.join(published)}")
    return Estimate(
        list(found.sets.values()),
        found.dataset,
        found.work,
        shared,
        costs,
        rates,
        gpus,
        cpus,
        notes,
    )


def rounds(models: int, gpus: int) -> int:
    """Rounds of model jobs when every GPU takes one model at a time."""
    return math.ceil(models / gpus)
