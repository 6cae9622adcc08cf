"""Files and folders outside the workflow that a step reads: its external inputs.

A stage names the params that may hold such a path (`Stage.external`): a local
dataset folder, a captions json, the folder of the official RoCOCO files, a local
checkpoint; or a comma list of `name=path` pairs (zeroshot.imagenet_maps), each path an input.
When a value names an existing local file or folder (or a `file://` URL),
it is an input of the step in both front ends: DVC hashes its content; Snakemake gets a
fingerprint of every file below it (name, size, md5), so an image replaced in place inside a
folder reruns the step too, and a file whose bytes are unchanged reruns nothing whatever its
time (a copy that rounds times); a path a step of the workflow makes (a fine-tuned checkpoint)
is an ordinary input instead, so that step runs first. Hub tags, http(s) URLs and null are not
paths and add nothing; a value that names a local path that does not exist is refused
(`missing`, checked by both front ends before anything runs).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vlstress.io import write_text
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


def named_path(value: Any) -> str | None:
    """The local path a params value names, whether or not it exists: a `file://` URL, or a value
    with a `/` (or starting with `.`) that is no URL and no `prefix:` reference such as a hub's
    `hf-hub:org/name`; None for null, a hub tag, a registry name."""
    if not isinstance(value, str) or not value:
        return None
    if value.startswith("file://"):
        return value[len("file://") :]
    if ":" in value:
        return None
    return value if "/" in value or value.startswith(".") else None


def missing(
    config: dict[str, Any],
    names: tuple[str, ...],
    axis_param: str | None = None,
    produced: frozenset[str] = frozenset(),
) -> list[tuple[str, str]]:
    """(param, path) of each local path the named params hold that does not exist and that no step
    makes: an input that cannot be read (every item of the axis, for `item.FIELD`)."""
    found = []
    for name in names:
        if name.startswith("item."):
            assert axis_param is not None, f"external {name!r} of a stage without an axis"
            field = name[len("item.") :]
            mapping = lookup(config, axis_param)
            located = [
                (f"{axis_param}.{k}.{field}", mapping[k].get(field))
                for k in sorted(mapping)
                if not _hub_id(mapping[k], field)
            ]
        else:
            located = [(name, lookup(config, name))]
        for param, value in located:
            for v in _paths_in(value):
                path = named_path(v)
                if path is None or os.path.exists(path) or os.path.normpath(path) in produced:
                    continue
                found.append((param, path))
    return found


def _hub_id(entry: Any, field: str) -> bool:
    """Whether `field` of a model entry names a hub repository, not a path: a LLaVA's `pretrained`
    `org/name` (vlstress.embedding.llava_entries)."""
    if field != "pretrained" or not isinstance(entry, dict) or "arch" not in entry:
        return False
    from vlstress.embedding import llava_entries
    from vlstress.embedding.kinds import model_kind

    if model_kind(str(entry["arch"])) != "llava" or entry.get(field) is None:
        return False
    return llava_entries.weights_kind(str(entry[field])) == "hub"


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


# md5 of each file by (size, mtime), one cache file per root: an unchanged file is read once, not
# at every plan, and a plan reads the caches of the roots it fingerprints only
HASHES = Path(".snakemake/vlstress/md5")
_HASHES: dict[str, dict[str, list[Any]]] = {}


def _cache_file(root: str) -> Path:
    return HASHES / (hashlib.sha1(os.path.abspath(root).encode()).hexdigest() + ".json")


def _hashes(root: str) -> dict[str, list[Any]]:
    key = os.path.abspath(root)
    if key not in _HASHES:
        try:
            found = json.loads(_cache_file(root).read_text(encoding="utf-8"))
        except (OSError, ValueError):  # none yet, or damaged: rebuilt
            found = {}
        _HASHES[key] = found if isinstance(found, dict) else {}
    return _HASHES[key]


def _md5(path: Path, size: int, mtime_ns: int, known: dict[str, list[Any]]) -> str | None:
    """The file's md5 (read again only when its size or time changed); None when the cache
    held it already."""
    key = str(path)
    held = known.get(key)
    if held is not None and held[:2] == [size, mtime_ns]:
        return None
    digest = hashlib.md5()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    known[key] = [size, mtime_ns, digest.hexdigest()]
    return digest.hexdigest()


def fingerprint(found: list[str], skip: Callable[[str], bool] | None = None) -> str:
    """Name, size and md5 of every file below the paths (but those whose name `skip` says):
    changes when any of them is edited, not when only its time does (a copy that rounds times, a
    `touch`), as DVC's hash. The md5 of a file whose size and mtime are unchanged is read from a
    cache under .snakemake/."""
    digest = hashlib.sha256()
    for root in found:
        if not os.path.exists(root):  # made by an earlier step (a missing input is refused first)
            continue
        entries = (
            [Path(root)]
            if os.path.isfile(root)
            else sorted(p for p in Path(root).rglob("*") if p.is_file())
        )
        known, changed = _hashes(root), False
        for path in entries:
            if skip is not None and skip(path.name):
                continue
            stat = path.stat()
            changed = _md5(path, stat.st_size, stat.st_mtime_ns, known) is not None or changed
            digest.update(f"{path}\0{stat.st_size}\0{known[str(path)][2]}\n".encode())
        if changed:
            try:
                write_text(_cache_file(root), json.dumps(known, sort_keys=True))
            except OSError:  # a read-only checkout: hashed again next time
                pass
    return digest.hexdigest()
