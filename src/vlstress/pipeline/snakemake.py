"""Snakemake rules from the stage table (used by workflow/Snakefile).

Each active stage becomes one named rule: inputs (with the code the step imports),
outputs (`directory()`, `report()` with a caption: the suite's `report/<caption>.rst`, the
engine's in workflow/report/), `log:` and
`benchmark:` under logs/, wildcard constraints from the axes, `resources: gpu=1` for
GPU stages and each job's runtime, memory and CPUs from the cost model
(`vlstress.pipeline.resources`), and the shell command with params values written in as DVC
prints them, so a Snakemake job runs the same command line as the matching DVC stage.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from vlstress import params as params_module
from vlstress.cost.jobs import JobPricer
from vlstress.errors import VlstressError
from vlstress.pipeline import (
    AXES,
    LISTS,
    active_stages,
    axis_item,
    check_inputs,
    code_inputs,
    derived,
    expand,
    external,
    is_stamp,
    item_field,
    output_templates,
    produced_paths,
    single_output,
    stage_axis_values,
    substitute_params,
    typed,
)
from vlstress.pipeline import resources as resources_module
from vlstress.pipeline.dvc import kept
from vlstress.workflow.spec import PLACEHOLDER, Stage, lookup, render_value

# The step's output goes to its log; when it fails, the log's last lines go to the console too.
THREADS_PARAM = "embed.threads"
SHELL = (
    "{params.command} > {log} 2>&1"
    " || {{ status=$?; echo 'vlstress: step failed (exit '$status'); last lines of {log}:' >&2;"
    " tail -n 20 {log} >&2; exit $status; }}"
)


def caption_path(stage: Stage, caption: str) -> str:
    """The report caption of an output, relative to the Snakefile: a suite keeps its captions in its
    package (`src/vlstress/suites/<suite>/report/`), the engine's stages in workflow/report/."""
    if stage.suite is None:
        return f"report/{caption}.rst"
    return f"../src/vlstress/suites/{stage.suite}/report/{caption}.rst"


@dataclass
class RuleSpec:
    name: str
    input: dict[str, Any]
    output: dict[str, Any]
    log: str
    benchmark: str
    params: dict[str, Any]
    resources: dict[str, Any]
    threads: int
    wildcard_constraints: dict[str, str]
    # run in the main process, never submitted to a cluster: code stamps hash a few files in
    # 0.3 s, far less than a SLURM submission
    local: bool = False


def param_files(workflow, config: dict[str, Any]) -> list[str]:
    """The params files behind `config`: params.yaml, then any --configfile, in Snakemake's order.

    Steps that read params themselves (summarize) get these files, so they see what
    Snakemake sees. Values given with --config exist in no file: refused with a clear message.
    """
    extra = [str(f) for f in workflow.overwrite_configfiles]
    files = [
        _relative(f)
        for f in [*(str(f) for f in workflow.configfiles if str(f) not in extra), *extra]
    ]
    if params_module.load(files) != config:
        raise VlstressError(
            "config differs from the params files "
            f"({', '.join(files)}): put overrides in a file and pass it with --configfile, not "
            "--config"
        )
    return files


def _relative(path: str) -> str:
    """Snakemake makes --configfile paths absolute; inside the project, keep them relative (same
    command anywhere)."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def _escape(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _item_param(config: dict[str, Any], axis: str, field: str) -> Callable:

    def value(wildcards) -> str:
        return render_value(axis_item(config, axis, wildcards[axis])[field])

    return value


def _shell(stage: Stage, config: dict[str, Any], files: list[str], params: dict[str, Any]) -> str:
    def fill(match):
        kind, name = match.group(1), match.group(2)
        if kind == "in":
            return "{input.%s}" % name
        if kind == "out":
            single_output(stage, name)
            return "{output.%s}" % name
        if kind == "p":
            return _escape(render_value(lookup(config, name)))
        if kind == "item":
            axis, field = item_field(stage, name)
            key = f"{axis}_{field}"
            params[key] = _item_param(config, axis, field)
            return "{params.%s}" % key
        if name == "params_files":
            return _escape(" ".join(f"--params {f}" for f in files))
        value = derived(stage, name)
        if value is not None:
            return _escape(value)
        if name in AXES:
            return "{wildcards.%s}" % name
        raise ValueError(f"stage {stage.name}: unknown placeholder {match.group(0)}")

    return PLACEHOLDER.sub(fill, stage.command)


def _command_param(template: str, items: dict[str, Callable]) -> Callable:
    """The job's full command as a params function of the job.

    The Snakefile's `shell:` is one constant string ("{params.command} ...") because a
    `shell:` directive inside the rule loop would be evaluated again when the job runs,
    after the loop has moved on to the last stage.
    """

    def command(wildcards, input, output) -> str:
        values = SimpleNamespace(**{name: item(wildcards) for name, item in items.items()})
        return template.format(input=input, output=output, wildcards=wildcards, params=values)

    return command


def _signature_param(template: str, items: dict[str, Callable]) -> Callable:
    """What decides the job's command, short of its paths: the template (params values in it) and
    the item fields."""

    def signature(wildcards) -> str:
        return (
            template
            + " "
            + json.dumps({name: item(wildcards) for name, item in sorted(items.items())})
        )

    return signature


def _external_inputs(stage: Stage, config: dict[str, Any]) -> Callable:
    axis_param = AXES[stage.axes[0]].param if len(stage.axes) == 1 else None
    axis = stage.axes[0] if len(stage.axes) == 1 else None
    produced = produced_paths(config)

    def found(wildcards) -> list[str]:
        key = wildcards[axis] if axis and AXES[axis].keys else None
        if axis and key is not None:
            axis_item(config, axis, key)
        return external.paths(config, stage.external, axis_param, key, produced=produced)

    return found


def _produced_inputs(stage: Stage, config: dict[str, Any]) -> Callable:
    """The external inputs a step of the workflow makes (a fine-tuned checkpoint named as a model's
    weights): Snakemake inputs, so that step runs first. The others are not inputs (Snakemake would
    compare their times): the job's `external` param holds their content's fingerprint."""
    found, produced = _external_inputs(stage, config), produced_paths(config)

    def made(wildcards) -> list[str]:
        return [path for path in found(wildcards) if os.path.normpath(path) in produced]

    return made


def _log_name(stage: Stage) -> str:
    return "/".join([stage.name, *("{%s}" % axis for axis in stage.axes)])


def rule_spec(
    stage: Stage, config: dict[str, Any], files: list[str], pricer: JobPricer | None = None
) -> RuleSpec:
    from snakemake.io import directory, report
    from snakemake.ioflags import update

    inputs: dict[str, Any] = {
        name: substitute_params(path, config) for name, path in stage.inputs.items()
    }
    for name, producer in stage.input_lists.items():
        inputs[name] = LISTS[producer].paths(typed(config))
    # `after` gates order DVC's stages only: Snakemake checks the params when it reads the
    # Snakefile, before any job, and a gate job would make every job downstream "updated"
    if stage.external:  # only what a step makes: the others are known by their content (below)
        inputs["external"] = _produced_inputs(stage, config)
    inputs["code"] = code_inputs(stage)
    outputs: dict[str, Any] = {}
    for name, out in stage.outputs.items():
        paths = []
        for template in output_templates(out, config):
            path = substitute_params(template, config)
            if out.directory:
                path = directory(path)
            elif kept(out):  # not deleted before the job: a failed job leaves the old file
                path = update(path)
            if out.caption:
                extra = {"htmlindex": out.htmlindex} if out.htmlindex else {}
                path = report(
                    path,
                    caption=caption_path(stage, out.caption),
                    category=out.category,
                    **extra,
                )
            paths.append(path)
        outputs[name] = paths if out.each else paths[0]
    items: dict[str, Any] = {}
    template = _shell(stage, config, files, items)
    # Snakemake's rerun trigger "params" ignores params computed from input/output (like
    # `command`): `signature` depends on wildcards only, so a params edit reruns the job
    params = {
        "command": _command_param(template, items),
        "signature": _signature_param(template, items),
    }
    if stage.external:
        # an edit inside an external folder changes no folder mtime, and a copy that rounds times
        # changes no byte: the step reruns when the content of a file below it changes
        found, produced = _external_inputs(stage, config), produced_paths(config)
        params["external"] = lambda wildcards: external.fingerprint(
            [path for path in found(wildcards) if os.path.normpath(path) not in produced]
        )
    resources: dict[str, Any] = (
        {"gpu": int(lookup(config, stage.gpus)) if stage.gpus else 1} if stage.gpu else {}
    )
    # a step told how many CPU threads to use gets that many cores from the scheduler
    threads = lookup(config, THREADS_PARAM) if "{p.%s}" % THREADS_PARAM in stage.command else 1
    # runtime, memory and CPUs of each job from the cost model (SLURM's sbatch -t, --mem, -c);
    # the code stamps hash files in the main process: nothing to ask for
    if not is_stamp(stage):
        priced = pricer or resources_module.job_pricer(config)
        resources.update(resources_module.stage_resources(stage, config, threads, priced))
    return RuleSpec(
        name=stage.name,
        input=inputs,
        output=outputs,
        log=f"logs/{_log_name(stage)}.log",
        benchmark=f"logs/benchmarks/{_log_name(stage)}.tsv",
        params=params,
        resources=resources,
        threads=threads,
        wildcard_constraints={axis: AXES[axis].pattern for axis in stage.axes},
        local=is_stamp(stage),
    )


def rules(config: dict[str, Any], files: list[str]) -> list[RuleSpec]:
    """The rules of the active stages; params naming a missing input are refused (Snakemake would
    plan nothing for a step whose input is gone and keep the results of the old one)."""
    check_inputs(config)
    found = resources_module.job_pricer(config)
    resources_module.warn_over_limit(config, found)
    return [rule_spec(stage, config, files, found) for stage in active_stages(config)]


def targets(config: dict[str, Any]) -> list[str]:
    """Every output of every active stage: `snakemake` with no target builds the whole workflow."""
    return [
        path
        for stage in active_stages(config)
        for out in stage.outputs.values()
        for template in output_templates(out, config)
        for path in expand(template, config, stage.axes, stage)
    ]


def job_targets(config: dict[str, Any]) -> list[str]:
    """What `rule all` asks for: one output of each job. Snakemake runs a job when any of its
    outputs is missing, so this asks for as much as every output does, with far fewer look-ups in
    Snakemake's output index, which tries every rule output under the same folder prefix
    (`results/metrics/{model}/`: hundreds at the papers' scale; docs/throughput.md).

    Asking only for the outputs no rule reads (the figures, tables and cards) would be fewer still,
    but Snakemake does not remake a lost intermediate file (a deleted record) when the files read
    from it are newer than what is left of their inputs; DVC would, and the front ends would
    disagree."""
    found = []
    for stage in active_stages(config):
        templates = [
            substitute_params(template, config)
            for out in stage.outputs.values()
            for template in output_templates(out, config)
        ]
        values = [stage_axis_values(stage, config, axis) for axis in stage.axes]
        found += [
            templates[0].format(**dict(zip(stage.axes, combo)))
            for combo in itertools.product(*values)
        ]
    return found


def sync_dvc_yaml(files: list[str], path: str = "dvc.yaml") -> None:
    """Keep dvc.yaml the rendering of params.yaml (when Snakemake runs on params.yaml alone)."""
    from vlstress.io import write_text
    from vlstress.pipeline import dvc

    if files != ["params.yaml"]:
        return
    text = dvc.render(params_module.load(files))
    if not os.path.isfile(path) or open(path, encoding="utf-8").read() != text:
        write_text(path, text)
        print(f"vlstress: {path} re-rendered for the current params.yaml")


def claim_checkout(workflow):
    """The main process of a real run takes the checkout (vlstress.pipeline.checkout); dry runs and
    jobs don't."""
    from vlstress.pipeline.checkout import claim

    if not workflow.is_main_process or workflow.dryrun:
        return None
    return claim()


def restore_folder_times(workflow) -> None:
    """Before planning (the main process, dry runs too): folder outputs rewritten since the last
    run with the same bytes (`dvc repro -f`) get their time back (`pipeline.folder_times`)."""
    from vlstress.pipeline import folder_times

    if workflow.is_main_process:
        folder_times.restore()


def remember_folder_times(workflow) -> None:
    """After a run: each folder output's content and time remembered, and the time of one rewritten
    with the same bytes (a forced rerun) put back, so the steps after it stay done."""
    from vlstress.pipeline import folder_times

    if workflow.is_main_process and not workflow.dryrun:
        folder_times.remember(folder_times.job_folders(workflow))


def record_in_dvc_lock(workflow, checkout=None, files: list[str] | None = None) -> None:
    """Record what Snakemake built in dvc.lock so that `dvc status` has nothing to do.

    Committed: the stages of the jobs this run finished, and those of the run's other jobs (found
    up to date) that dvc.lock has no entry for; a stage only when all its outputs are outputs of
    this run's jobs. A stage upstream that did not run is left as it is in the lock: committing it
    again checked every file of it, minutes for a one-job run on the demo. Called after a failed
    run too, for the jobs that finished. Only for params.yaml alone, which is what dvc.yaml
    describes. The DVC gate's stamp is written too: the Snakefile checked the params already.
    """
    from vlstress.io import write_text
    from vlstress.pipeline import GATE_STAMP
    from vlstress.pipeline.dvc import addresses, locked_stages, prune_lock
    from vlstress.workflow.paths import CHECKED

    if checkout is not None:
        checkout.release()  # `dvc commit` takes the repository lock itself
    if files != ["params.yaml"] or not os.path.isdir(".dvc"):
        return
    if importlib.util.find_spec("dvc") is None:
        print("warning: dvc is not installed beside Snakemake; dvc.lock not updated")
        return
    if not os.path.isfile(CHECKED):
        write_text(CHECKED, GATE_STAMP)
    dag = workflow.dag
    # the outputs of the jobs that finished or had nothing to do (after a failed run: not those
    # of the jobs that failed or never started)
    current = {
        os.path.normpath(str(path))
        for job in dag.jobs
        if dag.noneedrun_finished(job)
        for path in job.output
    }
    made = {
        os.path.normpath(str(path))
        for job in dag.jobs
        if dag.needrun(job) and dag.finished(job)
        for path in job.output
    }
    stages, locked = addresses(params_module.load(files)), locked_stages()
    built = [
        address
        for address, paths in stages
        if current.issuperset(found := {os.path.normpath(path) for path in paths})
        and (address not in locked or not made.isdisjoint(found))
    ]
    if not built:
        return
    # `dvc commit` re-links outputs from its cache (new files, new mtimes): Snakemake would then
    # see inputs newer than the outputs built from them and plan the run again. Times are put back.
    # The commit writes dvc.lock once, not once per stage as `dvc commit STAGE...` does
    # (vlstress.pipeline.dvc_commit).
    times = _mtimes(sorted(current))
    result = subprocess.run(
        [sys.executable, "-m", "vlstress.pipeline.dvc_commit", *built],
        capture_output=True,
        text=True,
    )
    _restore(times)
    if result.returncode != 0:
        print(f"warning: `dvc commit` failed; dvc.lock not updated:\n{result.stderr}")
        return
    dropped = prune_lock(params_module.load(files))
    if dropped:
        print(f"vlstress: dvc.lock: dropped {len(dropped)} stages no longer in dvc.yaml")


def _mtimes(paths: list[str]) -> dict[str, int]:
    """The mtime (ns) of every output file and folder, folders' contents included."""
    found = {}
    for path in paths:
        if os.path.isdir(path):
            for root, _, files in os.walk(path):
                for name in [root, *(os.path.join(root, f) for f in files)]:
                    found[name] = os.stat(name, follow_symlinks=False).st_mtime_ns
        elif os.path.lexists(path):
            found[path] = os.stat(path, follow_symlinks=False).st_mtime_ns
    return found


def _restore(times: dict[str, int]) -> None:
    """Put back the mtimes of `_mtimes`: files first, then folders deepest first (a file replaced in
    a folder changes the folder's mtime)."""
    for path in sorted(times, key=lambda p: (os.path.isdir(p), -p.count(os.sep))):
        try:
            if os.stat(path, follow_symlinks=False).st_mtime_ns != times[path]:
                os.utime(path, ns=(times[path], times[path]), follow_symlinks=False)
        except (OSError, NotImplementedError):  # gone, or not ours to touch (a shared cache)
            continue
