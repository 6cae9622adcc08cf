"""What a stage is: one declaration that both front ends (DVC, Snakemake) are built from.

A stage declares its command as a template, its inputs and outputs as path templates,
the axes it is repeated over, the suite that switches it on, and its resources. The
code it depends on is found from the command's imports (`code_deps`), never listed by
hand. Placeholders in templates:

    {in.NAME}     path of input NAME          {out.NAME}   path of output NAME
    {p.a.b}       params value a.b            {item.FIELD} field of the item of a
    {AXIS}        value of an axis (model, ...)              single-axis stage (e.g. a model's arch)
    {item.AXIS.FIELD}  field of the item of a named axis (a list of mappings with a `name`),
                  in a stage over several axes (e.g. an attack's kind)

DVC renders them as `${...}` interpolation (so `dvc repro` reads params.yaml itself and
`foreach`/`matrix` pick up new models or lambdas); Snakemake gets the same values from
its config, formatted as DVC prints them (`render_value`), so both front ends run the
very same command line and write the same provenance.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vlstress.params import Params

PLACEHOLDER = re.compile(r"\{(?:(in|out|p|item)\.)?([A-Za-z_][A-Za-z0-9_.]*)\}")


@dataclass(frozen=True)
class Axis:
    """A dimension a stage is repeated over: the keys of a params mapping or the items of a params
    list."""

    name: str
    param: str  # dotted params path, e.g. "models" or "image_variants.lams"
    pattern: str  # Snakemake wildcard constraint
    keys: bool = False  # the param is a mapping: the axis runs over its keys (DVC `${key}`)
    # the param is a list of mappings, each named by this field: the axis runs over the names, and
    # the fields of each entry reach commands even in a DVC `matrix` (which hands out only the keys
    # of a mapping, but whole entries of a list)
    named: str | None = None
    # the param is a count N (absent: 1): the axis runs over 0 .. N-1 (the shards of a job)
    count: bool = False


@dataclass(frozen=True)
class Output:
    path: str
    directory: bool = False
    cache: bool = True  # DVC: False for small text results that git tracks
    persist: bool = False  # DVC: keep between runs (e.g. a downloaded resource)
    record: bool = False  # a metric record the summary reads
    outcomes: bool = False  # the per-item outcomes of a record (vlstress.outcomes)
    metric: bool = False  # DVC `metrics:`
    plot: dict[str, Any] | None = None  # DVC `plots:` options ({} = defaults)
    # Snakemake report caption: report/<caption>.rst of the suite (engine: workflow/report)
    caption: str | None = None
    category: str | None = None  # Snakemake report category
    # a directory in the Snakemake report: the page it opens on (its other files linked from it)
    htmlindex: str | None = None
    suites: tuple[str, ...] = ()  # present only when one of these suites is on (empty: always)
    # axes the stage is not repeated over but this output is: one job writes one file per value
    # (e.g. a model's record of every corruption and severity), so the planners see one job
    # where there were as many as values; the command finds the values itself (from the params)
    each: tuple[str, ...] = ()


@dataclass(frozen=True)
class Stage:
    name: str
    command: str  # template, starts with "vlstress <subcommand>"
    inputs: dict[str, str] = field(default_factory=dict)  # name -> path template
    outputs: dict[str, Output] = field(default_factory=dict)
    axes: tuple[str, ...] = ()
    suite: str | None = None  # None: always on
    gpu: bool = False  # asks the scheduler for a GPU (Snakemake resources gpu=1, SLURM gres)
    # with gpu: the params value that says how many (data-parallel steps); None = 1
    gpus: str | None = None
    data: tuple[str, ...] = ()  # package data files the step reads (paths under src/vlstress)
    # name -> a list of paths (see pipeline.LISTS)
    input_lists: dict[str, str] = field(default_factory=dict)
    external: tuple[
        str, ...
    ] = ()  # params that may name a local file/folder the step reads (pipeline.external)
    after: tuple[
        str, ...
    ] = ()  # DVC gates: stages that must run first (Snakemake checks params at parse time)
    doc: str = ""
    # the kinds of model (vlstress.embedding.kinds) a stage over the model axis runs for; empty:
    # the kinds that embed images (retrieval and the caption sets need a text tower: ("open_clip",);
    # the model card takes every kind, the assistant's questions only ("llava",))
    model_kinds: tuple[str, ...] = ()
    # modules the command runs beyond its own imports (named on its command line, e.g. a suite's
    # figure module or the set providers of `{providers.GROUP}`): their code is the stage's too
    code: tuple[str, ...] = ()
    # on only for the params this says (e.g. a job split into shards, or not); None: always
    when: Callable[[dict[str, Any]], bool] | None = None
    # the stage whose priced work its jobs do (`vlstress.cost.jobs`), if not its own name
    priced_as: str | None = None

    @property
    def subcommand(self) -> str:
        parts = self.command.split()
        if parts[0] != "vlstress" or len(parts) < 2:
            raise ValueError(
                f"stage {self.name}: the command must start with `vlstress <subcommand>`"
            )
        return parts[1]


def lookup(params: dict[str, Any], dotted: str) -> Any:
    """params["a"]["b"] for "a.b"; a clear KeyError naming the path."""
    node: Any = params
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            raise KeyError(f"params have no `{dotted}`")
        node = node[part]
    return node


def count(params: Mapping[str, Any], dotted: str) -> int:
    """A count param (a count axis, e.g. the shards of a job): absent or null is 1."""
    node: Any = params
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or node.get(part) is None:
            return 1
        node = node[part]
    return int(node)


def render_value(value: Any) -> str:
    """A params value as DVC's `${...}` interpolation prints it in a command (None, true/false,
    numbers)."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@dataclass(frozen=True)
class PathList:
    """A list of paths a stage reads as a whole: a Snakemake input list; for DVC, folders plus the
    params that shape it.

    Paths and folders are templates: `{model}` and other axes of the reading stage are left in
    (Snakemake fills them as wildcards, DVC as `${...}`). Suites that declare a list of the same
    name add to it (the zero-shot image sets of a model come from four suites).
    """

    paths: Callable[[Params], list[str]]
    folders: Callable[[Params], list[str]]
    params: Callable[[Params], list[str]]


@dataclass(frozen=True)
class Suite:
    """One suite: its stages and everything the engine needs to know of it, as data.

    Declared in `vlstress.suites.<name>.suite` and listed in `vlstress.suites.registry`; the
    renderer, the params check, the report and the CLI read these fields and name no suite.
    """

    name: str
    description: str
    stages: tuple[Stage, ...] = ()
    needs: tuple[str, ...] = ()  # params blocks it reads
    requires: tuple[
        str, ...
    ] = ()  # other suites that must be on (their stages make this one's inputs)
    always: bool = False  # on whatever `suites:` says (original retrieval)
    axes: tuple[Axis, ...] = ()
    # subcommand -> (module, help)
    commands: dict[str, tuple[str, str]] = field(default_factory=dict)
    params: str | None = None  # module with SCHEMA (its params blocks) and problems(params)
    # module with price(pricing: vlstress.cost.pricing.Pricing): what `vlstress cost` charges it
    pricing: str | None = None
    lists: dict[str, PathList] = field(default_factory=dict)  # path lists its stages feed others
    # embedding group -> module with sets(config, group)
    providers: dict[str, str] = field(default_factory=dict)
    # record task -> report.tasks.Task (display)
    tasks: dict[str, Any] = field(default_factory=dict)
    extra_plots: tuple[dict[str, Any], ...] = ()  # more `dvc plots` views of its stages' plot data
