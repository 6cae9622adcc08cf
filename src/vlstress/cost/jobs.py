"""What each job asks the scheduler for: runtime, memory and CPUs, from the cost model.

`vlstress cost` prices a grid per suite and per model; here the same figures are split into
jobs. Each suite's hook says which stage's jobs do each piece of work (`Work.stage`,
`Shared.stage`) and how it splits over the values of that stage's axis after the model (an
attack, a correspondence set, a corruption: `weights`; none: evenly). A job's predicted seconds
are its share at its model's rates (`estimate.arch_rates`) plus one GPU start-up; it asks for
that x `runtime_margin`, at least `min_job_minutes`, and no more than `max_job_hours` when the
prediction itself fits (a job predicted longer asks for what it needs, and is named). Memory: a
base per job, plus the decoding workers and twice the model's fp32 weights (the checkpoint and the
model while it loads) for a GPU job. A GPU job asks for one CPU for itself and one per decoding
worker.

A GPU job of a model the cost model cannot price (an architecture in no table, an assistant:
generation is not priced) asks for the cluster's limits (`max_job_hours`, `unpriced_mem_mb`),
and `unpriced` names the models, so the caller can say so; a CPU job of a model reads files
(records, embeddings) and asks for the minimum.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vlstress.cost import estimate as cost_estimate
from vlstress.cost.estimate import Estimate, ModelCost
from vlstress.cost.pricing import Hook, Shared, Work
from vlstress.cost.profile import arch_cost
from vlstress.cost.rates import Rates
from vlstress.errors import VlstressError
from vlstress.typed import build

MB_PER_MPARAM = 8  # fp32 weights held twice while a checkpoint loads: 2 x 4 bytes a parameter


@dataclass(frozen=True)
class Cluster:
    """The params' `cluster` block: what every job may ask for, cluster-wide."""

    KEY = "cluster"
    max_job_hours: float = 4.0  # the longest job the cluster takes (`vlstress cost` names longer)
    runtime_margin: float = 2.0  # runtime asked = predicted x this
    min_job_minutes: int = 30  # no job asks for less
    mem_mb: int = 4000  # every job's base memory
    worker_mem_mb: int = 1000  # each decoding worker of a GPU job
    gpu_workers: int = 8  # decoding workers of a GPU job when embed.workers is null
    unpriced_mem_mb: int = 32000  # a job the cost model cannot price
    embed_shards: int = 1  # jobs a model's zero-shot image sets are embedded in (joined after)


def cluster_of(values: Mapping[str, Any]) -> Cluster:
    return build(Cluster, values.get(Cluster.KEY) or {}, Cluster.KEY)


@dataclass(frozen=True)
class JobResources:
    """One job's request: minutes, MB, CPUs; `seconds` is the prediction (None: not priced)."""

    runtime: int
    mem_mb: int
    cpus_per_task: int
    seconds: float | None


@dataclass(frozen=True)
class JobShape:
    """What the pricer needs of a stage: its name, whether it runs on a GPU, its axes after the
    model (the first splits by the work's weights) and the number of values of each."""

    stage: str
    gpu: bool
    model: bool
    axes: Sequence[tuple[str, int]] = ()
    cpus: int = 1  # CPU threads of a CPU job


class JobPricer:
    def __init__(
        self,
        found: Estimate | None,
        values: Mapping[str, Any],
        unpriced: Sequence[str],
        why: str = "",
    ):
        self.found = found  # None: the grid could not be priced (`why`)
        self.why = why
        self.cluster = cluster_of(values)
        workers = (values.get("embed") or {}).get("workers")
        self.workers = self.cluster.gpu_workers if workers is None else int(workers)
        self.models: dict[str, ModelCost] = {m.slug: m for m in (found.models if found else ())}
        self.unpriced = tuple(unpriced)
        self._mparams = {
            slug: _mparams(entry or {}) for slug, entry in (values.get("models") or {}).items()
        }

    def _share(self, item: Work | Shared, shape: JobShape, key: str | None) -> float:
        """The share of `item` one job of the stage does."""
        share = 1.0
        rest = list(shape.axes)
        if rest:
            _, count = rest.pop(0)
            if item.weights:
                total = sum(item.weights.values())
                share = item.weights.get(str(key), 0.0) / total if total else 0.0
            else:
                share = 1.0 / max(count, 1)
        for _, count in rest:
            share /= max(count, 1)
        return share

    def seconds(self, shape: JobShape, model: str | None, key: str | None) -> float | None:
        """Predicted seconds of one job (`key`: its value of the first axis after the model)."""
        if self.found is None:
            return None
        rates = self.found.rates
        if shape.model:
            cost = self.models.get(str(model))
            if cost is None:  # a GPU job of a model not priced; a CPU job reads files
                return None if shape.gpu else 0.0
            total = 0.0
            for w in self.found.work:
                share = self._share(w, shape, key)
                if w.stage == shape.stage:
                    total += share * w.image_passes / cost.images_per_s
                if (w.text_stage or w.stage) == shape.stage and math.isfinite(cost.captions_per_s):
                    total += share * w.texts / cost.captions_per_s
        else:
            total = sum(
                self._share(s, shape, key) * (s.cpu_s / max(shape.cpus, 1) + s.gpu_s)
                for s in self.found.shared
                if s.stage == shape.stage
            )
        return total + (rates.startup_s if shape.gpu else 0.0)

    def resources(self, shape: JobShape, model: str | None, key: str | None) -> JobResources:
        cluster = self.cluster
        seconds = self.seconds(shape, model, key)
        cpus = 1 + self.workers if shape.gpu else shape.cpus
        if seconds is None:
            return JobResources(
                math.ceil(cluster.max_job_hours * 60), cluster.unpriced_mem_mb, cpus, None
            )
        minutes = max(cluster.min_job_minutes, math.ceil(seconds * cluster.runtime_margin / 60))
        limit = math.floor(cluster.max_job_hours * 60)
        if seconds <= cluster.max_job_hours * 3600:  # the margin never asks past the limit
            minutes = min(minutes, max(limit, 1))
        mem = cluster.mem_mb
        if shape.gpu:
            mem += self.workers * cluster.worker_mem_mb
            mparams = self._mparams.get(str(model)) if shape.model else self._shared_mparams(shape)
            mem += math.ceil(MB_PER_MPARAM * (mparams or 0.0))
        return JobResources(minutes, mem, cpus, seconds)

    def _shared_mparams(self, shape: JobShape) -> float | None:
        """The largest model a shared GPU job runs (the fine-tuned base, the overlap detector)."""
        found = [
            arch_cost(s.arch).mparams or 0.0
            for s in (self.found.shared if self.found else ())
            if s.stage == shape.stage and s.arch
        ]
        return max(found, default=None)


def _mparams(entry: Mapping[str, Any]) -> float | None:
    """Millions of parameters of a model: its attributes (as `vlstress pool` writes them), else
    the cost table's figure for its architecture."""
    attributes = entry.get("attributes") or {}
    counted = [attributes.get("params_image_m"), attributes.get("params_text_m")]
    if counted[0] is not None:
        return float(sum(c for c in counted if c is not None))
    try:
        return arch_cost(str(entry.get("arch"))).mparams
    except VlstressError:
        return None


def pricer(
    values: Mapping[str, Any],
    on: frozenset[str],
    rates: Rates,
    hooks: Sequence[Hook],
    text_suites: frozenset[str],
) -> JobPricer:
    """The pricer of the params' jobs. Models the cost tables lack and assistants are unpriced
    (`JobPricer.unpriced`); a grid the cost model cannot price at all (e.g. a set of unknown size
    it needs) leaves every job unpriced, and `JobPricer.why` says why."""
    models = dict(values.get("models") or {})
    generating = set(cost_estimate.assistants(values))
    known, unknown = {}, []
    for slug, entry in models.items():
        try:
            arch_cost(str((entry or {}).get("arch")))
        except VlstressError:
            unknown.append(slug)
            continue
        if slug in generating:
            unknown.append(slug)
        known[slug] = entry
    priced = {**values, "models": known}
    try:
        found = cost_estimate.estimate(
            priced, on, rates, 1, 1, text_suites=text_suites, hooks=hooks
        )
    except VlstressError as error:  # e.g. a set of unknown size it needs
        return JobPricer(None, values, [], str(error))
    return JobPricer(found, values, sorted(unknown))
