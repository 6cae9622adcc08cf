"""Lists of strings in files, in CLIP_benchmark's forms: one per line (`.txt`), a JSON list, or a
JSON object keyed by dataset with the key after `#` (`en_classnames.json#cifar10`). Class-name
files of the test sets and prompt-template files use them."""

from __future__ import annotations

import json
from pathlib import Path

from vlstress.errors import VlstressError


def read_list(spec: str, what: str) -> list[str]:
    path_text, _, key = spec.partition("#")
    path = Path(path_text)
    if not path.is_file():
        raise VlstressError(f"{what} file not found: {path}")
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise VlstressError(f"{what} file {path} is not valid JSON: {exc}") from None
        if isinstance(data, dict):
            if not key:
                raise VlstressError(
                    f"{what} file {path} is keyed by dataset ({', '.join(sorted(data)[:8])}, "
                    "...): add #KEY"
                )
            if key not in data:
                raise VlstressError(f"{what} file {path} has no key {key!r}")
            data = data[key]
        if not isinstance(data, list) or not all(isinstance(item, str) for item in data):
            raise VlstressError(
                f"{what} file {path}{'#' + key if key else ''}: expected a list of strings"
            )
        items = data
    else:
        items = [line.strip() for line in text.splitlines() if line.strip()]
    if not items:
        raise VlstressError(f"{what} file {spec} is empty")
    return items


def load_names(spec: str) -> list[str]:
    """Class names from a file (one per line, JSON list, or JSON object with #key)."""
    return read_list(spec, "class-name")


def class_name_problems(spec: str | None, where: str) -> list[str]:
    """What is wrong with a class-name file, known before any test set is built: unreadable,
    empty, or names that coincide (every duplicate named)."""
    from vlstress.testsets.manifest import duplicate_names

    if not spec:
        return []
    try:
        names = load_names(spec)
    except VlstressError as exc:
        return [f"{where}: {exc}"]
    same = duplicate_names(names)
    return [
        f"{where}: class name {name!r} is in {spec} {len(rows)} times (entries "
        f"{', '.join(str(i + 1) for i in rows)}): tied classifier rows would score each other's "
        "images"
        for name, rows in same.items()
    ]
