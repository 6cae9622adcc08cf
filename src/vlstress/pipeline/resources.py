"""Each Snakemake job's resources from the cost model (`vlstress.cost.jobs`): `runtime`
(minutes), `mem_mb` and `cpus_per_task`, which the SLURM executor turns into `sbatch -t`,
`--mem` and `--cpus-per-task`; a local run ignores them. Priced once when the Snakefile is
read; a model the cost model cannot price is named on the console, never priced silently."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vlstress.cost.jobs import JobPricer, JobShape, pricer
from vlstress.cost.pricing import Hook
from vlstress.errors import VlstressError
from vlstress.params import suites_on
from vlstress.pipeline import MODEL_AXIS, SUITES, stage_axis_values
from vlstress.workflow.spec import Stage

RESOURCES = ("runtime", "mem_mb", "cpus_per_task")


def job_pricer(config: dict[str, Any], rate_file: Path | None = None) -> JobPricer:
    """The pricer of the params' jobs, with the suites' pricing hooks in registry order and the
    rates measured on the reference GPU (`rate_file`; default: the project's benchmarks/results)."""
    from vlstress.cost import rates
    from vlstress.embedding.kinds import IMAGE_TEXT_KINDS

    hooks = [
        Hook(suite.name, suite.pricing, suite.always) for suite in SUITES.values() if suite.pricing
    ]
    text_suites = frozenset(
        suite.name
        for suite in SUITES.values()
        if any(set(stage.model_kinds or ()) == set(IMAGE_TEXT_KINDS) for stage in suite.stages)
    )
    try:
        measured = rates.load(rate_file) if rate_file else rates.load()
        found = pricer(config, suites_on(config), measured, hooks, text_suites)
    except Exception as error:  # noqa: BLE001 - pricing never stops a run (a broken input file
        # is the step's to report); every job then asks for the limits, and the console says why
        why = str(error) if isinstance(error, VlstressError) else f"{type(error).__name__}: {error}"
        found = JobPricer(None, config, [], why)
    cluster = found.cluster
    limits = f"{cluster.max_job_hours:g} h, {cluster.unpriced_mem_mb} MB: params `cluster`"
    if found.found is None:
        print(
            f"vlstress: resources: the cost model cannot price this grid ({found.why}); every "
            f"job asks for the cluster's limits ({limits})",
            file=sys.stderr,
        )
    elif found.unpriced:
        print(
            "vlstress: resources: the cost model prices no GPU job of "
            f"{', '.join(found.unpriced)}; they ask for the cluster's limits ({limits})",
            file=sys.stderr,
        )
    return found


def shape(stage: Stage, config: dict[str, Any], threads: int) -> JobShape:
    rest = [axis for axis in stage.axes if axis != MODEL_AXIS.name]
    return JobShape(
        stage.priced_as or stage.name,
        stage.gpu,
        MODEL_AXIS.name in stage.axes,
        tuple((axis, len(stage_axis_values(stage, config, axis))) for axis in rest),
        threads,
    )


def stage_resources(
    stage: Stage, config: dict[str, Any], threads: int, found: JobPricer
) -> dict[str, Callable]:
    """`runtime`, `mem_mb` and `cpus_per_task` of the stage's jobs, as functions of a job's
    wildcards."""
    job = shape(stage, config, threads)
    first = job.axes[0][0] if job.axes else None
    cache: dict[tuple[str | None, str | None], Any] = {}

    def of(wildcards) -> Any:
        model = wildcards[MODEL_AXIS.name] if job.model else None
        key = wildcards[first] if first else None
        if (model, key) not in cache:
            cache[model, key] = found.resources(job, model, key)
        return cache[model, key]

    def field(name: str) -> Callable:
        return lambda wildcards: getattr(of(wildcards), name)

    return {name: field(name) for name in RESOURCES}


def longest_jobs(config: dict[str, Any], found: JobPricer) -> list[dict[str, Any]]:
    """Per priced stage of the params: its jobs, the longest one's request and prediction, and
    how many are predicted over `cluster.max_job_hours` (`vlstress cost`, and the warning when
    the workflow is read)."""
    from vlstress.pipeline import active_stages, is_stamp

    limit = found.cluster.max_job_hours * 3600
    rows = []
    for stage in active_stages(config):
        if is_stamp(stage):
            continue
        job = shape(stage, config, 1)
        models = stage_axis_values(stage, config, MODEL_AXIS.name) if job.model else [None]
        keys = stage_axis_values(stage, config, job.axes[0][0]) if job.axes else [None]
        priced = [
            (found.resources(job, model, key), model, key) for model in models for key in keys
        ]
        seconds = [(r.seconds, r, model, key) for r, model, key in priced if r.seconds is not None]
        if not seconds or max(s for s, *_ in seconds) <= 0:
            continue
        longest = max(seconds, key=lambda row: row[0])
        others = math.prod(count for _, count in job.axes[1:])
        rows.append(
            {
                "stage": stage.name,
                "jobs": len(priced) * others,
                "hours": longest[0] / 3600,
                "request": longest[1],
                "model": longest[2],
                "item": longest[3],
                "over": others * sum(1 for s, *_ in seconds if s > limit),
            }
        )
    return rows


def warn_over_limit(config: dict[str, Any], found: JobPricer) -> None:
    over = [row for row in longest_jobs(config, found) if row["over"]]
    if not over:
        return
    named = "; ".join(
        f"{row['stage']}: {row['over']} of {row['jobs']} (longest {row['hours']:.1f} h, "
        f"{row['model'] or row['item']})"
        for row in over
    )
    print(
        f"vlstress: resources: jobs predicted over cluster.max_job_hours "
        f"({found.cluster.max_job_hours:g} h): {named}. `vlstress cost` prices them",
        file=sys.stderr,
    )


def fewest_shards(config: dict[str, Any], found: JobPricer, most: int = 256) -> dict[str, int]:
    """For each stage with jobs predicted over `cluster.max_job_hours` that a sharded form splits
    (a stage priced as it, over a count axis), the fewest shards that bring every one of its jobs
    under the limit: count param -> shards (none below `most`: left out)."""
    import copy

    from vlstress.pipeline import AXES, STAGES

    over = {row["stage"] for row in longest_jobs(config, found) if row["over"]}
    split = [
        (stage, axis)
        for stage in STAGES
        if stage.priced_as in over
        for axis in stage.axes
        if AXES[axis].count
    ]
    needed: dict[str, int] = {}
    for stage, axis in split:
        param = AXES[axis].param
        for shards in range(2, most + 1):
            trial = copy.deepcopy(config)
            node = trial
            *parents, last = param.split(".")
            for part in parents:
                if node.get(part) is None:
                    node[part] = {}
                node = node[part]
            node[last] = shards
            rows = longest_jobs(trial, JobPricer(found.found, trial, found.unpriced))
            sharded = [row for row in rows if row["stage"] == stage.name]
            if sharded and not any(row["over"] for row in sharded):
                needed[param] = shards
                break
    return needed
