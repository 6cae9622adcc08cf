"""params.yaml: load and merge (Snakemake's rule for --configfile), and the typed view of it.

`Params` is built once from the merged mapping: the engine's blocks typed here, each suite's block
typed by the dataclass its package declares (`vlstress.suites.<suite>.params`, read with
`Params.block`), and which suites are on (`suites_on`, the one place that says so). A step that
reads the params files depends on this small module and on the blocks it reads, not on the checks
(`vlstress.params_check`), which know every suite."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol, TypeVar

import yaml

from vlstress import typed
from vlstress.errors import VlstressError


def merge(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    """Recursive update (mappings merge, everything else is replaced): Snakemake's rule for
    --configfile."""
    out = copy.deepcopy(base)
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def load(paths: Sequence[str | Path]) -> dict[str, Any]:
    """The params of one or more files, later files overriding earlier ones."""
    params: dict[str, Any] = {}
    for path in paths:
        path = Path(path)
        if not path.is_file():
            raise VlstressError(f"params file not found: {path}")
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise VlstressError(f"params file {path} is not valid YAML: {exc}") from None
        if not isinstance(data, dict):
            raise VlstressError(f"params file {path}: expected a mapping at the top level")
        params = merge(params, data)
    return params


def suites_on(values: Mapping[str, Any]) -> frozenset[str]:
    """The suites the `suites:` block switches on: the one place that computes it. The always-on
    suite (original retrieval) has no switch; its stages belong to no suite."""
    return frozenset(str(name) for name, on in (values.get("suites") or {}).items() if on)


@dataclass(frozen=True)
class Dataset:
    """A caption dataset (`dataset`, and the training set of `finetune.train`)."""

    name: str
    kind: str
    images: str | None = None
    captions: str | None = None
    max_images: int | None = None
    image_ids: tuple[int, ...] | None = None
    coco_url: str | None = None
    karpathy_url: str | None = None
    rococo_url: str | None = None


@dataclass(frozen=True)
class Model:
    arch: str
    pretrained: str | None
    # as `vlstress pool` writes them (vlstress.pool.attributes); keyword-only: a subclass adds
    # fields without defaults
    attributes: Mapping[str, Any] | None = field(default=None, kw_only=True)


@dataclass(frozen=True)
class NamedModel(Model):
    """A model a block names outside the registry (the EI scorer, the fine-tuning base)."""

    slug: str


@dataclass(frozen=True)
class Embed:
    batch_size: int
    cuda_batch_size: int | None
    device: str
    cache_dir: str
    threads: int
    workers: int | None
    precision: Literal["fp32", "amp"]
    decoder: Literal["pil", "nvjpeg"]


@dataclass(frozen=True)
class Evaluate:
    ks: tuple[int, ...]
    chunk_size: int
    ties: Literal["optimistic", "pessimistic"]


@dataclass(frozen=True)
class Testset:
    """A labelled test set (zero-shot test sets, OOD sets): a kind of `vlstress.testsets.kinds`."""

    kind: str
    root: str | None
    annotations: str | None
    classnames: str | None
    max_per_class: int | None
    min_size: int
    label: Literal["category", "supercategory"]
    corruption: str | None
    keep: tuple[str, ...] | None
    drop: tuple[str, ...] | None


class Block(Protocol):
    """A suite's params block: a frozen dataclass naming its key in params.yaml."""

    KEY: ClassVar[str]


B = TypeVar("B", bound=Block)


@dataclass(frozen=True)
class Params:
    """The params, typed once. `values` is the merged mapping as in the files: what the schema
    checks and what DVC's templating and the workflow renderer read."""

    values: Mapping[str, Any]
    on: frozenset[str]
    seed: int
    dataset: Dataset
    models: Mapping[str, Model]
    embed: Embed
    evaluate: Evaluate
    _blocks: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> Params:
        """The typed view of a merged params mapping (the engine's blocks converted here)."""
        missing = [
            key for key in ("seed", "dataset", "models", "embed", "evaluate") if key not in values
        ]
        if missing:
            raise VlstressError(f"params lack {', '.join(missing)}")
        return cls(
            values=values,
            on=suites_on(values),
            seed=typed.build(int, values["seed"], "seed"),
            dataset=typed.build(Dataset, values["dataset"], "dataset"),
            models=typed.build(dict[str, Model], values["models"], "models"),
            embed=typed.build(Embed, values["embed"], "embed"),
            evaluate=typed.build(Evaluate, values["evaluate"], "evaluate"),
        )

    @classmethod
    def load(cls, paths: Sequence[str | Path]) -> Params:
        return cls.of(load(paths))

    def block(self, kind: type[B]) -> B:
        """A suite's block, typed by the dataclass its package declares (built once, kept)."""
        key = kind.KEY
        if key not in self._blocks:
            if key not in self.values:
                raise VlstressError(f"params have no `{key}` block")
            self._blocks[key] = typed.build(kind, self.values[key], key)
        found: B = self._blocks[key]
        return found
