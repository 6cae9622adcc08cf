"""The workflow as data: the stage table, expanded for given params.

- `stages.STAGES`: every stage, declared once (command, inputs, outputs, axes, suite, resources);
- `active_stages(params)`: the stages of the suites that are on, with the outputs they keep;
- `expand(template, params, axes)`: the concrete paths of a path template;
- `record_paths(params)`: exactly the metric records the current params produce, the list
  the summary is built from (never a folder scan, so nothing stale shows up);
- `dvc.render(params)` writes dvc.yaml; `snakemake.rules(config, ...)` feeds workflow/Snakefile.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from vlstress.code_deps import dependencies
from vlstress.params import Params, suites_on
from vlstress.suites import registry
from vlstress.workflow.paths import CHECKED
from vlstress.workflow.spec import (
    PLACEHOLDER,
    Axis,
    Output,
    PathList,
    Stage,
    Suite,
    count,
    lookup,
    render_value,
)
from vlstress.workflow.stages import DATA, GATE, HEADLINE_TABLE, SUMMARIZE
from vlstress.workflow.stages import EXTRA_PLOTS as ENGINE_PLOTS

__all__ = [
    "AXES",
    "STAGES",
    "SUITES",
    "Output",
    "Stage",
    "active_stages",
    "axis_values",
    "code_paths",
    "expand",
    "record_paths",
]

SOURCE_ROOT = "src/vlstress"
MODEL_AXIS = Axis("model", "models", r"[A-Za-z0-9][A-Za-z0-9_+-]*", keys=True)


def _suites() -> tuple[Suite, ...]:
    return registry.suites()


SUITES: dict[str, Suite] = {suite.name: suite for suite in _suites()}
# the gate first, the gallery's data, every suite's stages in registry order, the summary
STAGES: list[Stage] = [
    GATE,
    *DATA,
    *(stage for suite in _suites() for stage in suite.stages),
    SUMMARIZE,
    HEADLINE_TABLE,
]
AXES: dict[str, Axis] = {
    axis.name: axis for axis in (MODEL_AXIS, *(axis for suite in _suites() for axis in suite.axes))
}
EXTRA_PLOTS = [*ENGINE_PLOTS, *(plot for suite in _suites() for plot in suite.extra_plots)]


_TYPED: dict[int, tuple[Mapping[str, Any], Any, Params]] = {}


def typed(params: Mapping[str, Any]) -> Params:
    """The typed view of a params mapping the renderer was handed, built once per mapping (and again
    if it was edited in place since): path lists and set providers read it; templates read the
    mapping itself (as DVC does)."""
    import copy

    held = _TYPED.get(id(params))
    if held is None or held[0] is not params or held[1] != params:
        held = _TYPED[id(params)] = (params, copy.deepcopy(params), Params.of(params))
    return held[2]


def _keep(output: Output, on: frozenset[str]) -> bool:
    return not output.suites or bool(set(output.suites) & on)


def active_stages(params: dict[str, Any]) -> list[Stage]:
    """Stages of the always-on part and of every suite that is on; outputs of suites that are off
    dropped."""
    on = suites_on(params)
    active = []
    for stage in STAGES:
        if stage.suite is not None and stage.suite not in on and not SUITES[stage.suite].always:
            continue
        if stage.when is not None and not stage.when(params):
            continue
        outputs = {name: out for name, out in stage.outputs.items() if _keep(out, on)}
        active.append(replace(stage, outputs=outputs))
    return [*(code_stamp(stage) for stage in active if stage.name != GATE.name), *active]


# Each stage's code dependency is one stamp file listing the md5 of its source files (written by
# `vlstress code-stamp`, one small step per stage kind): dvc.lock and Snakemake's DAG then hold
# each stage kind's files once, not once per model and condition (at paper scale, 80% of
# dvc.lock was the same source files listed again for every step). The gate keeps its files: it
# runs before anything else, the stamp steps included.
CODE_STAMPS = "results/code"
STAMP_COMMAND = "code-stamp"


def is_stamp(stage: Stage) -> bool:
    return stage.subcommand == STAMP_COMMAND


def stamp_path(stage: Stage) -> str:
    return f"{CODE_STAMPS}/{stage.name}.md5"


_STAMPS: dict[tuple[str, str, tuple[str, ...]], Stage] = {}


def code_stamp(stage: Stage) -> Stage:
    """The step that writes `stage`'s code stamp: its inputs are the stage's source files."""
    key = (stage.name, stage.command, stage.code)
    if key not in _STAMPS:
        _STAMPS[key] = _new_stamp(stage)
    return _STAMPS[key]


def _new_stamp(stage: Stage) -> Stage:
    files = code_paths(stage)
    return Stage(
        f"code_{stage.name}",
        f"vlstress {STAMP_COMMAND} --out {{out.stamp}} " + " ".join(files),
        inputs={f"file{i}": path for i, path in enumerate(files)},
        outputs={"stamp": Output(stamp_path(stage), cache=False)},
        suite=stage.suite,
        after=(CHECKED,),
        doc=f"the md5 of each source file of {stage.name}",
    )


def code_inputs(stage: Stage) -> list[str]:
    """What a stage depends on for its code: its stamp; a stamp step and the gate, their files."""
    return code_paths(stage) if is_stamp(stage) or stage.name == GATE.name else [stamp_path(stage)]


def axis_values(params: dict[str, Any], axis: str) -> list[str]:
    """The values of an axis as they appear in paths and commands (sorted keys, list order, or
    0 .. N-1 of a count)."""
    spec = AXES[axis]
    if spec.count:
        return [str(i) for i in range(count(params, spec.param))]
    value = lookup(params, spec.param)
    if spec.keys:
        return sorted(str(key) for key in value)
    if spec.named:
        return [str(item[spec.named]) for item in value]
    return [render_value(item) for item in value]


def stage_axis_values(stage: Stage | None, params: dict[str, Any], axis: str) -> list[str]:
    """The values of an axis a stage runs over: on the model axis, only the models of the kinds it
    takes (`Stage.model_kinds`; none declared: the embedding kinds)."""
    values = axis_values(params, axis)
    if stage is None or axis != MODEL_AXIS.name:
        return values
    from vlstress.embedding.kinds import model_kind, stage_kinds

    models = lookup(params, MODEL_AXIS.param)
    kinds = stage_kinds(stage.model_kinds)
    return [key for key in values if model_kind(models[key]["arch"]) in kinds]


def left_out_models(stage: Stage, params: dict[str, Any]) -> bool:
    """Whether a stage over the model axis leaves some model of the params out (its kind)."""
    return MODEL_AXIS.name in stage.axes and stage_axis_values(
        stage, params, MODEL_AXIS.name
    ) != axis_values(params, MODEL_AXIS.name)


def axis_item(params: dict[str, Any], axis: str, key: str) -> Any:
    """The params entry of one value of a mapping or named axis (a model, an attack); an unknown one
    is named."""
    spec = AXES[axis]
    value = lookup(params, spec.param)
    if spec.named:
        found = [item for item in value if str(item[spec.named]) == key]
        if found:
            return found[0]
        known = [str(item[spec.named]) for item in value]
    else:
        if key in value:
            return value[key]
        known = sorted(value)
    raise ValueError(
        f"unknown {axis} {key!r}: not in `{spec.param}` of the params (known: {', '.join(known)})"
    )


def item_field(stage: Stage, name: str) -> tuple[str, str]:
    """(axis, field) of an `{item.FIELD}` (single-axis stage over a mapping or named list) or
    `{item.AXIS.FIELD}` (a named axis of a stage over several axes) placeholder."""
    axis, _, field = name.partition(".")
    if field and axis in stage.axes and AXES[axis].named:
        return axis, field
    if len(stage.axes) == 1 and (AXES[stage.axes[0]].keys or AXES[stage.axes[0]].named):
        return stage.axes[0], name
    raise ValueError(
        f"stage {stage.name}: {{item.{name}}} needs one axis over a mapping, or "
        f"{{item.AXIS.FIELD}} of a named axis"
    )


def substitute_params(template: str, params: dict[str, Any]) -> str:
    """Fill `{p.x}` placeholders with params values; leave every other placeholder."""

    def fill(match):
        kind, name = match.group(1), match.group(2)
        return render_value(lookup(params, name)) if kind == "p" else match.group(0)

    return PLACEHOLDER.sub(fill, template)


def expand(
    template: str,
    params: dict[str, Any],
    axes: tuple[str, ...] | None = None,
    stage: Stage | None = None,
) -> list[str]:
    """Every concrete path of a template over the values of its axes (params filled in); with a
    stage, the model axis holds the models of the kinds it takes."""
    text = substitute_params(template, params)
    used = [
        name
        for kind, name in ((m.group(1), m.group(2)) for m in PLACEHOLDER.finditer(text))
        if kind is None
    ]
    axes = tuple(dict.fromkeys(a for a in (axes or used) if a in used))
    unknown = [a for a in used if a not in AXES]
    if unknown:
        raise ValueError(f"template {template!r} uses unknown axes {unknown}")
    combos = itertools.product(*(stage_axis_values(stage, params, a) for a in axes))
    return [text.format(**dict(zip(axes, combo))) for combo in combos]


def each_template(template: str, params: dict[str, Any], each: tuple[str, ...]) -> list[str]:
    """An output template once per value of its `each` axes (`Output.each`), those axes written
    in and every other placeholder left: the paths one job writes."""
    if not each:
        return [template]
    found = []
    for combo in itertools.product(*(axis_values(params, axis) for axis in each)):
        values = dict(zip(each, combo))

        def fill(match, values=values):
            kind, name = match.group(1), match.group(2)
            return values[name] if kind is None and name in values else match.group(0)

        found.append(PLACEHOLDER.sub(fill, template))
    return found


def output_templates(out: Output, params: dict[str, Any]) -> list[str]:
    return each_template(out.path, params, out.each)


def single_output(stage: Stage, name: str) -> None:
    """An `{out.NAME}` of a command must be one path: an output written once per value of its
    `each` axes is many (the command finds them from the params)."""
    each = stage.outputs[name].each
    if each:
        raise ValueError(
            f"stage {stage.name}: {{out.{name}}} is one file per {', '.join(each)}"
            " (Output.each): the command cannot name it"
        )


def stage_outputs(stage: Stage, params: dict[str, Any]) -> Iterator[tuple[str, Output, str]]:
    for name, out in stage.outputs.items():
        for template in output_templates(out, params):
            for path in expand(template, params, stage.axes, stage):
                yield name, out, path


_PRODUCED: dict[int, tuple[Mapping[str, Any], Any, frozenset[str]]] = {}


def produced_paths(params: dict[str, Any]) -> frozenset[str]:
    """Every output path of the stages the params switch on (normalised); found once per params
    mapping (and again if it was edited in place), as `typed`: Snakemake asks for every job."""
    import copy
    import os

    held = _PRODUCED.get(id(params))
    if held is None or held[0] is not params or held[1] != params:
        found = frozenset(
            os.path.normpath(path)
            for stage in active_stages(params)
            for _, _, path in stage_outputs(stage, params)
        )
        held = _PRODUCED[id(params)] = (params, copy.deepcopy(params), found)
    return held[2]


def missing_inputs(params: dict[str, Any]) -> list[str]:
    """What the active stages read from outside the workflow and cannot find: a path a params value
    names (an input template such as `{p.overlap.train.path}`, or an external input: a dataset
    folder, a local checkpoint) that does not exist and that no step makes. One line each, naming
    the param and the path; empty when every input is there."""
    import os

    from vlstress.pipeline import external

    produced = produced_paths(params)
    found: dict[str, None] = {}
    for stage in active_stages(params):
        for template in stage.inputs.values():
            if "{p." not in template:
                continue
            path = substitute_params(template, params)
            if PLACEHOLDER.search(path) or os.path.normpath(path) in produced:
                continue
            if not os.path.exists(path):
                params_named = ", ".join(
                    f"`{m.group(2)}`" for m in PLACEHOLDER.finditer(template) if m.group(1) == "p"
                )
                found[f"{params_named} names {path}, which does not exist (stage {stage.name})"] = (
                    None
                )
        axis_param = AXES[stage.axes[0]].param if len(stage.axes) == 1 else None
        for param, path in external.missing(params, stage.external, axis_param, produced):
            found[f"`{param}` names {path}, which does not exist (stage {stage.name})"] = None
    return list(found)


def check_inputs(params: dict[str, Any]) -> None:
    """Refuse params whose inputs from outside the workflow are missing (`missing_inputs`): neither
    front end may plan around them (Snakemake would keep the results of the old input)."""
    from vlstress.errors import VlstressError

    problems = missing_inputs(params)
    if problems:
        raise VlstressError(
            "missing inputs: fix the path or create it first\n  - " + "\n  - ".join(problems)
        )


def _outputs_flagged(params: dict[str, Any], flag: str) -> list[Path]:
    """The outputs of the current params' stages whose `Output` has `flag` set, in stage order."""
    return [
        Path(path)
        for stage in active_stages(params)
        for _, out, path in stage_outputs(stage, params)
        if getattr(out, flag)
    ]


def record_paths(params: dict[str, Any]) -> list[Path]:
    """Every metric record that the stages of the current params write, in stage order."""
    return _outputs_flagged(params, "record")


def outcome_paths(params: dict[str, Any]) -> list[Path]:
    """Every per-item outcomes file that the stages of the current params write, in stage order."""
    return _outputs_flagged(params, "outcomes")


def record_params(params: dict[str, Any]) -> list[str]:
    """The params that decide which records exist: suites and the axes of the record stages that are
    on."""
    axes = [
        a
        for stage in active_stages(params)
        for out in stage.outputs.values()
        if out.record
        for a in (*stage.axes, *out.each)
    ]
    return ["suites", *dict.fromkeys(AXES[a].param for a in axes)]


def _joined(lists: list[PathList]) -> PathList:
    """One path list from the contributions of several suites (duplicates dropped, order kept)."""

    def join(part: str) -> Callable[[Params], list[str]]:
        return lambda params: list(
            dict.fromkeys(p for found in lists for p in getattr(found, part)(params))
        )

    return PathList(join("paths"), join("folders"), join("params"))


def _lists() -> dict[str, PathList]:
    contributions: dict[str, list[PathList]] = {}
    for suite in _suites():
        for name, found in suite.lists.items():
            contributions.setdefault(name, []).append(found)
    return {name: _joined(found) for name, found in contributions.items()}


LISTS: dict[str, PathList] = {
    "records": PathList(
        lambda params: [str(p) for p in record_paths(dict(params.values))],
        lambda params: ["results/metrics"],
        lambda params: record_params(dict(params.values)),
    ),
    "outcomes": PathList(
        lambda params: [str(p) for p in outcome_paths(dict(params.values))],
        lambda params: ["results/metrics"],
        lambda params: record_params(dict(params.values)),
    ),
    **_lists(),
}


def providers(group: str) -> list[str]:
    """The modules that add sets to an embedding group (or evaluations), in registry order."""
    return [suite.providers[group] for suite in _suites() if group in suite.providers]


def commands() -> dict[str, tuple[str, str]]:
    """Every subcommand: the engine's, then each suite's."""
    from vlstress.cli import (
        ENGINE_COMMANDS,  # not followed as a dependency: the CLI only dispatches
    )

    found = dict(ENGINE_COMMANDS)
    for suite in _suites():
        clash = sorted(set(found) & set(suite.commands))
        if clash:
            raise ValueError(f"suite {suite.name}: command(s) {', '.join(clash)} declared twice")
        found.update(suite.commands)
    return found


PROVIDERS = re.compile(r"\{providers\.([a-z_]+)\}")


def stage_modules(stage: Stage) -> list[str]:
    """The modules a stage's command runs: its command module, the modules the stage names for it
    (`code`), and the providers of every `{providers.GROUP}` on its command line."""
    known = commands()
    if stage.subcommand not in known:
        raise ValueError(f"stage {stage.name}: unknown subcommand {stage.subcommand!r}")
    named = [module for group in PROVIDERS.findall(stage.command) for module in providers(group)]
    return list(dict.fromkeys([known[stage.subcommand][0], *stage.code, *named]))


_CODE: dict[tuple[str, str, tuple[str, ...]], list[str]] = {}


def code_paths(stage: Stage) -> list[str]:
    """The source and data files a stage's command depends on, relative to the repository root
    (found once per stage and process: the renderers ask for every job)."""
    key = (stage.name, stage.command, stage.code)
    if key not in _CODE:
        root = Path(__file__).resolve().parents[1]
        files = sorted({path for module in stage_modules(stage) for path in dependencies(module)})
        _CODE[key] = [f"{SOURCE_ROOT}/{path.relative_to(root).as_posix()}" for path in files]
    return list(_CODE[key])


def figure_names(stage: Stage) -> str:
    return ",".join(name[: -len("_png")] for name in stage.outputs if name.endswith("_png"))


# What the gate stage writes when the params pass (constant: the steps after it rerun for their own
# inputs only).
GATE_STAMP = "vlstress: params valid and dvc.yaml current (`vlstress pipeline check`)\n"


def derived(stage: Stage, name: str) -> str | None:
    """A placeholder computed from the stage and the registry (same text in both front ends):
    `{figures}` (the figures the stage draws), `{providers.GROUP}` (the modules that add to a
    group)."""
    if name == "figures":
        return figure_names(stage)
    prefix, _, group = name.partition(".")
    if prefix == "providers" and group:
        found = providers(group)
        if not found:
            raise ValueError(
                f"stage {stage.name}: no suite provides {group!r} ({{providers.{group}}})"
            )
        return ",".join(found)
    return None
