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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterator

from vlstress.pipeline.code_deps import dependencies
from vlstress.pipeline.spec import PLACEHOLDER, Output, Stage, lookup, render_value
from vlstress.pipeline.stages import AXES, STAGES, SUITES, TESTSET, TEXT_SET, VARIANT_DIR, CLASSIFIERS, ZEROSHOT_EMB, evaluation_folders, evaluation_params, zeroshot_embedding_sets, zeroshot_evaluations  # fmt: skip

__all__ = ["AXES", "STAGES", "SUITES", "Output", "Stage", "active_stages", "axis_values", "code_paths", "expand", "record_paths"]

SOURCE_ROOT = "src/vlstress"


def suites_on(params: dict[str, Any]) -> set[str]:
    return {name for name, on in (params.get("suites") or {}).items() if on}


def _keep(output: Output, on: set[str]) -> bool:
    return not output.suites or bool(set(output.suites) & on)


def active_stages(params: dict[str, Any]) -> list[Stage]:
    """Stages of the always-on part and of every suite that is on; outputs of suites that are off dropped."""
    on = suites_on(params)
    active = []
    for stage in STAGES:
        if stage.suite is not None and stage.suite not in on:
            continue
        outputs = {name: out for name, out in stage.outputs.items() if _keep(out, on)}
        active.append(replace(stage, outputs=outputs))
    return active


def axis_values(params: dict[str, Any], axis: str) -> list[str]:
    """The values of an axis as they appear in paths and commands (sorted keys, or list order)."""
    spec = AXES[axis]
    value = lookup(params, spec.param)
    if spec.keys:
        return sorted(str(key) for key in value)
    if spec.named:
        return [str(item[spec.named]) for item in value]
    return [render_value(item) for item in value]


def axis_item(params: dict[str, Any], axis: str, key: str) -> Any:
    """The params entry of one value of a mapping or named axis (a model, an attack); an unknown one is named."""
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
    raise ValueError(f"unknown {axis} {key!r}: not in `{spec.param}` of the params (known: {', '.join(known)})")


def item_field(stage: Stage, name: str) -> tuple[str, str]:
    """(axis, field) of an `{item.FIELD}` (single-axis stage over a mapping or named list) or
    `{item.AXIS.FIELD}` (a named axis of a stage over several axes) placeholder."""
    axis, _, field = name.partition(".")
    if field and axis in stage.axes and AXES[axis].named:
        return axis, field
    if len(stage.axes) == 1 and (AXES[stage.axes[0]].keys or AXES[stage.axes[0]].named):
        return stage.axes[0], name
    raise ValueError(f"stage {stage.name}: {{item.{name}}} needs one axis over a mapping, or {{item.AXIS.FIELD}} of a named axis")


def substitute_params(template: str, params: dict[str, Any]) -> str:
    """Fill `{p.x}` placeholders with params values; leave every other placeholder."""

    def fill(match):
        kind, name = match.group(1), match.group(2)
        return render_value(lookup(params, name)) if kind == "p" else match.group(0)

    return PLACEHOLDER.sub(fill, template)


def expand(template: str, params: dict[str, Any], axes: tuple[str, ...] | None = None) -> list[str]:
    """Every concrete path of a template over the values of its axes (params filled in)."""
    text = substitute_params(template, params)
    used = [name for kind, name in ((m.group(1), m.group(2)) for m in PLACEHOLDER.finditer(text)) if kind is None]
    axes = tuple(dict.fromkeys(a for a in (axes or used) if a in used))
    unknown = [a for a in used if a not in AXES]
    if unknown:
        raise ValueError(f"template {template!r} uses unknown axes {unknown}")
    combos = itertools.product(*(axis_values(params, a) for a in axes))
    return [text.format(**dict(zip(axes, combo))) for combo in combos]


def stage_outputs(stage: Stage, params: dict[str, Any]) -> Iterator[tuple[str, Output, str]]:
    for name, out in stage.outputs.items():
        for path in expand(out.path, params, stage.axes):
            yield name, out, path


def produced_paths(params: dict[str, Any]) -> frozenset[str]:
    """Every output path of the stages the params switch on (normalised)."""
    import os

    return frozenset(os.path.normpath(path) for stage in active_stages(params) for _, _, path in stage_outputs(stage, params))


def record_paths(params: dict[str, Any]) -> list[Path]:
    """Every metric record that the stages of the current params write, in stage order."""
    return [Path(path) for stage in active_stages(params) for _, out, path in stage_outputs(stage, params) if out.record]


def record_params(params: dict[str, Any]) -> list[str]:
    """The params that decide which records exist: suites and the axes of the record stages that are on."""
    axes = [a for stage in active_stages(params) if any(o.record for o in stage.outputs.values()) for a in stage.axes]
    return ["suites", *dict.fromkeys(AXES[a].param for a in axes)]


@dataclass(frozen=True)
class PathList:
    """A list of paths a stage reads as a whole: a Snakemake input list; for DVC, folders plus the params that shape it.

    Paths and folders are templates: `{model}` and other axes of the reading stage are left in
    (Snakemake fills them as wildcards, DVC as `${...}`).
    """

    paths: Callable[[dict[str, Any]], list[str]]
    folders: Callable[[dict[str, Any]], list[str]]
    params: Callable[[dict[str, Any]], list[str]]


def _zeroshot_paths(params: dict[str, Any]) -> list[str]:
    """The test-set folders of every zero-shot evaluation and the model's folders holding their
    embeddings and classifiers (a file inside a folder output is no Snakemake input)."""
    evaluations = zeroshot_evaluations(params)
    return list(dict.fromkeys([e.testset for e in evaluations] + [ZEROSHOT_EMB, CLASSIFIERS] * bool(evaluations)))


def _zeroshot_data(params: dict[str, Any]) -> list[str]:
    return list(dict.fromkeys(folder for _, folder in zeroshot_embedding_sets(params, "images")))


def _zeroshot_data_folders(params: dict[str, Any]) -> list[str]:
    folders = [folder for folder in evaluation_folders(params) if not folder.startswith("results/")]
    return folders + ["data/ood"] * ("ood" in suites_on(params))


def _zeroshot_data_params(params: dict[str, Any]) -> list[str]:
    return evaluation_params(params) + [AXES["oodset"].param] * ("ood" in suites_on(params))


def _when(suite: str, value: Callable[[dict[str, Any]], list[str]]) -> Callable[[dict[str, Any]], list[str]]:
    """`value(params)` while `suite` is on, else nothing (its params block may be absent)."""
    return lambda params: value(params) if suite in suites_on(params) else []


LISTS = {
    "records": PathList(lambda params: [str(p) for p in record_paths(params)], lambda params: ["results/metrics"], record_params),
    "text_sets": PathList(
        _when("rococo_text", lambda params: expand(TEXT_SET, params)),
        _when("rococo_text", lambda params: ["data/text_variants"]),
        _when("rococo_text", lambda params: [AXES["set"].param]),
    ),
    "image_variant_sets": PathList(
        _when("rococo_image", lambda params: expand(VARIANT_DIR, params)),
        _when("rococo_image", lambda params: ["data/image_variants"]),
        _when("rococo_image", lambda params: [AXES[axis].param for axis in ("method", "lam", "seed")]),
    ),
    "zeroshot_sets": PathList(_zeroshot_paths, evaluation_folders, evaluation_params),
    "zeroshot_testsets": PathList(
        _when("zeroshot", lambda params: expand(TESTSET, params)),
        _when("zeroshot", lambda params: ["data/testsets"]),
        _when("zeroshot", lambda params: [AXES["testset"].param]),
    ),
    "zeroshot_data": PathList(_zeroshot_data, _zeroshot_data_folders, _zeroshot_data_params),
}


def code_paths(stage: Stage) -> list[str]:
    """The source and data files a stage's command depends on, relative to the repository root."""
    from vlstress.cli import COMMANDS

    if stage.subcommand not in COMMANDS:
        raise ValueError(f"stage {stage.name}: unknown subcommand {stage.subcommand!r}")
    files = dependencies(COMMANDS[stage.subcommand][0])
    root = Path(__file__).resolve().parents[1]
    return [f"{SOURCE_ROOT}/{path.relative_to(root).as_posix()}" for path in files]


def figure_names(stage: Stage) -> str:
    return ",".join(name[: -len("_png")] for name in stage.outputs if name.endswith("_png"))


# What the gate stage writes when the params pass (constant: the steps after it rerun for their own inputs only).
GATE_STAMP = "vlstress: params valid and dvc.yaml current (`vlstress pipeline check`)\n"

# Placeholders computed from the stage itself (same text in both front ends).
DERIVED = {"figures": figure_names}
