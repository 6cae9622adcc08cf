"""Files and folders outside the workflow that a step reads: its external inputs.

A stage names the params that may hold such a path (`Stage.external`): a local
dataset folder, a captions json, the folder of the official RoCOCO files, a local
checkpoint; or a comma list of `name=path` pairs (zeroshot.imagenet_maps), each path an input.
When a value names an existing local file or folder (or a `file://` URL),
it is an input of the step in both front ends: DVC hashes its content, Snakemake gets
it as an input plus a fingerprint of every file below it (name, size, mtime), so an
image replaced in place inside a folder reruns the step too. Hub tags, http(s) URLs
and null are not paths and add nothing.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from vlstress.workflow.spec import lookup


def local_path(value: Any) -> str | None:
    """The local path a params value names, or None (null, hub tag, http URL, missing path)."""
    if not isinstance(value, str) or not value:
        return None
    if value.startswith("file://"):
        value = value[len("file://") :]
    elif "://" in value:
        return None
    return value if os.path.exists(value) else None


def _paths_in(value: Any) -> list[Any]:
    """The paths a value may name: itself (a file or folder that exists, whatever its name holds),
    or each right-hand side of a `name=path,...` list."""
    if isinstance(value, str) and "=" in value and "://" not in value and not local_path(value):
        return [pair.partition("=")[2].strip() for pair in value.split(",")]
    return [value]


def values(
    config: dict[str, Any], name: str, axis_param: str | None = None, key: str | None = None
) -> list[Any]:
    """The params values an external name refers to: `a.b`, or `item.f` of one axis item (or of all
    items)."""
    if not name.startswith("item."):
        return [lookup(config, name)]
    field = name[len("item.") :]
    assert axis_param is not None, f"external {name!r} of a stage without an axis"
    mapping = lookup(config, axis_param)
    items = [mapping[key]] if key is not None else [mapping[k] for k in sorted(mapping)]
    return [item.get(field) for item in items]


def paths(
    config: dict[str, Any],
    names: tuple[str, ...],
    axis_param: str | None = None,
    key: str | None = None,
    produced: frozenset[str] = frozenset(),
) -> list[str]:
    """The local paths the named params hold; a path the workflow itself produces (`produced`: e.g.
    a fine-tuned checkpoint named as a model's weights) is listed even before it exists, so the step
    waits for the step that makes it."""
    found = [
        local_path(v)
        or (os.path.normpath(v) if isinstance(v, str) and os.path.normpath(v) in produced else None)
        for name in names
        for value in values(config, name, axis_param, key)
        for v in _paths_in(value)
    ]
    return sorted({p for p in found if p is not None})


def fingerprint(found: list[str]) -> str:
    """Name, size and mtime of every file below the paths: changes when any of them is edited."""
    digest = hashlib.sha256()
    for root in found:
        if not os.path.exists(
            root
        ):  # made by an earlier step of this run: an ordinary input already
            continue
        entries = (
            [Path(root)]
            if os.path.isfile(root)
            else sorted(p for p in Path(root).rglob("*") if p.is_file())
        )
        for path in entries:
            stat = path.stat()
            digest.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()
