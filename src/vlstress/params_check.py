"""The params check, the same on every path (Snakemake, DVC's gate stage, the CLI).

The schema is the engine's (package data `params.schema.yaml`) with each suite's blocks added
(`vlstress.suites.<suite>.params.SCHEMA`); it checks types and values. On top of it, unknown keys
are named with the closest known one, each suite that is on must have the params blocks it reads
and the suites it requires, and each suite checks its own blocks (`problems(params, on)`).
"""

from __future__ import annotations

import copy
import difflib
import importlib
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from vlstress.errors import VlstressError
from vlstress.params import suites_on

SCHEMA_FILE = "data/params.schema.yaml"


def unknown(what: str, name: str, known) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    return (
        f"unknown {what} {name!r}"
        + (f" (did you mean {close[0]!r}?)" if close else "")
        + f"; known: {', '.join(known)}"
    )


def classifier_problems(models: dict[str, Any], slug: str, where: str) -> list[str]:
    """A params value that must name a model with class scores (an open_clip or timm model, not
    an assistant)."""
    from vlstress.embedding.kinds import EMBEDDING_KINDS, model_kind

    if slug not in models:
        return [f"{where}: " + unknown("model", slug, models)]
    kind = model_kind(models[slug]["arch"])
    if kind not in EMBEDDING_KINDS:
        return [
            f"{where}: {slug!r} is an assistant ({kind}) and scores no classes: name a model of "
            f"kind {' or '.join(EMBEDDING_KINDS)}"
        ]
    return []


def model_problems(models: dict[str, Any]) -> list[str]:
    """What the model card would refuse of each registry entry and can be told without a model
    library: a LLaVA entry's form and local folder (its files), a timm architecture's name (read
    from timm's source, not imported). Checked here, a bad entry stops the run before any step:
    a step that fails has already lost its old outputs (both front ends delete them first)."""
    from vlstress.embedding import llava_entries, timm_names
    from vlstress.embedding.kinds import TIMM_PREFIX, model_kind

    found = []
    for slug, entry in models.items():
        kind = model_kind(entry["arch"])
        if kind == "llava":
            try:
                llava_entries.check(slug, entry["arch"], entry["pretrained"])
            except VlstressError as error:
                found.append(f"models.{slug}: {error}")
        elif kind == "timm":
            problem = timm_names.problem(slug, entry["arch"].removeprefix(TIMM_PREFIX))
            if problem:
                found.append(f"models.{slug}: {problem}")
    return found


def schema() -> dict[str, Any]:
    """The whole params schema: the engine's keys and every suite's blocks."""
    from vlstress.suites import registry

    found = yaml.safe_load(
        resources.files("vlstress").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
    )
    for suite in registry.suites():
        if suite.params:
            found["properties"].update(copy.deepcopy(importlib.import_module(suite.params).SCHEMA))
    return found


def merge_into_file(target: str | Path, update_file: str | Path) -> None:
    """Merge a params file into `target` in place, as `merge` does, keeping target's comments and
    order."""
    from ruamel.yaml import YAML

    from vlstress.io import atomic_path

    yaml_rt = YAML()
    yaml_rt.width = 120
    yaml_rt.representer.add_representer(
        type(None), lambda rep, _: rep.represent_scalar("tag:yaml.org,2002:null", "null")
    )
    target, update_file = Path(target), Path(update_file)
    document = yaml_rt.load(target.read_text(encoding="utf-8"))
    update = yaml_rt.load(update_file.read_text(encoding="utf-8")) or {}

    def apply(node, changes) -> None:
        for key, value in changes.items():
            if isinstance(value, dict) and isinstance(node.get(key), dict):
                apply(node[key], value)
            else:
                node[key] = value

    apply(document, update)
    with atomic_path(target) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        yaml_rt.dump(document, fh)


def _pattern_message(error) -> str | None:
    """A value of the wrong form, said with its description rather than the regular expression."""
    description = error.schema.get("description") if isinstance(error.schema, dict) else None
    if error.validator != "pattern" or not description:
        return None
    return f"{_where(error)}: {error.instance!r} is not of the expected form: {description}"


def _where(error) -> str:
    return ".".join(str(p) for p in error.absolute_path) or "(top level)"


def _unknown_key_message(error) -> str | None:
    if error.validator != "additionalProperties" or not isinstance(error.instance, dict):
        return None
    known = list(error.schema.get("properties", {}))
    unknown = [k for k in error.instance if k not in known]
    if not unknown or not known:
        return None
    parts = []
    for key in unknown:
        close = difflib.get_close_matches(key, known, n=1)
        where = f"in {_where(error)}" if error.absolute_path else "at the top level"
        parts.append(
            f"unknown key {key!r} {where}" + (f" (did you mean {close[0]!r}?)" if close else "")
        )
    return "; ".join(parts) + f"; known keys: {', '.join(known)}"


def problems(params: Any) -> list[str]:
    """Every problem of a params mapping, as readable lines (empty when valid)."""
    import jsonschema

    from vlstress.caption_data.kinds import KINDS as DATASET_KINDS
    from vlstress.suites import registry

    suites = registry.by_name()
    validator = jsonschema.Draft202012Validator(schema())
    found = []
    for error in sorted(
        validator.iter_errors(params), key=lambda e: list(map(str, e.absolute_path))
    ):
        found.append(
            _unknown_key_message(error)
            or _pattern_message(error)
            or f"{_where(error)}: {error.message}"
        )
    if found or not isinstance(params, dict):
        return found
    switchable = [name for name, suite in suites.items() if not suite.always]
    on = suites_on(params)
    for name in params.get("suites", {}):
        if name not in switchable:
            close = difflib.get_close_matches(name, switchable, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            found.append(
                f"suites: unknown suite {name!r}{hint}; known suites: {', '.join(switchable)}"
            )
        elif name in on:
            missing = [block for block in suites[name].needs if block not in params]
            if missing:
                found.append(f"suites.{name} is on but params lack {', '.join(missing)}")
            off = [other for other in suites[name].requires if other not in on]
            if off:
                found.append(f"suites.{name} is on but needs suite(s) {', '.join(off)} on too")
    if found:
        return found
    kind = params["dataset"]["kind"]
    if kind not in DATASET_KINDS:
        found.append("dataset.kind: " + unknown("dataset kind", kind, DATASET_KINDS))
    found += model_problems(params["models"])
    embed = params["embed"]
    if embed["decoder"] == "nvjpeg" and not embed["device"].startswith(("auto", "cuda")):
        # with `auto` the model step refuses it if it resolves to the CPU
        found.append(
            f"embed.decoder: 'nvjpeg' decodes JPEGs on the GPU and needs embed.device auto or "
            f"cuda, not {embed['device']!r}: set embed.decoder: pil"
        )
    for suite in suites.values():
        if suite.params:
            found += importlib.import_module(suite.params).problems(params, on)
    return found


def validate(params: Any, source: str = "params.yaml") -> dict[str, Any]:
    """Raise one VlstressError listing every problem; return the params unchanged when valid."""
    found = problems(params)
    if found:
        lines = "\n".join(f"  - {line}" for line in found)
        raise VlstressError(f"{source} failed validation:\n{lines}")
    return params
