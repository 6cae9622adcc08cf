"""Atomic, deterministic writers: every artifact is written to a temp file and renamed.

Deterministic means: same content -> same bytes (sorted JSON keys, no timestamps),
so that same params + same seeds give byte-identical artifacts.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _current_umask()


def process_alive(pid: int) -> bool:
    """Whether process `pid` exists (it may belong to another user)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clear_stale_temps(path: Path) -> None:
    """Remove the temp siblings of `path` (`.<name>.<pid>.*.tmp`) that a writer killed with -9 left
    behind.

    A killed process runs no cleanup; its half-written temp file or folder would otherwise stay
    forever beside the output (and inside folders other steps hash, e.g. data/testsets/).
    Temps of a live process are kept: it may still be writing.
    """
    import glob
    import shutil

    for stale in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
        pid = stale.name[len(path.name) + 2 :].split(".", 1)[0]
        if pid.isdigit() and process_alive(int(pid)):
            continue
        if stale.is_dir() and not stale.is_symlink():
            shutil.rmtree(stale, ignore_errors=True)
        else:
            stale.unlink(missing_ok=True)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temp path beside `path`; rename it onto `path` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    clear_stale_temps(path)
    fd, tmp = tempfile.mkstemp(
        prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent
    )
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.chmod(tmp_path, 0o666 & ~_UMASK)  # mkstemp makes 0600; artifacts are shared files
        os.replace(tmp_path, path)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def dumps_json(obj: Any) -> str:
    return (
        json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False, default=_json_default) + "\n"
    )


def _json_default(obj: Any) -> Any:
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating,)):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def write_json(path: str | os.PathLike, obj: Any) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(dumps_json(obj), encoding="utf-8")


def write_text(path: str | os.PathLike, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_npy(path: str | os.PathLike, array: np.ndarray) -> None:
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.save(fh, np.ascontiguousarray(array), allow_pickle=False)


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def read_json(path: str | os.PathLike, what: str = "JSON file", strict: bool = False) -> Any:
    """Read JSON with an error that names the file and the problem; `strict` also refuses NaN and
    Infinity."""
    from vlstress.errors import VlstressError

    path = Path(path)
    if not path.is_file():
        raise VlstressError(f"{what} not found: {path}")
    text = path.read_text(encoding="utf-8")
    if not text.strip():
        raise VlstressError(f"{what} is empty: {path}")
    try:
        return json.loads(text, parse_constant=_reject_constant) if strict else json.loads(text)
    except json.JSONDecodeError as exc:
        raise VlstressError(
            f"{what} is not valid JSON: {path} (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    except ValueError as exc:
        raise VlstressError(f"{what} {path} is not strict JSON: {exc}") from None


def sidecar(path: str | os.PathLike) -> Path:
    """Provenance sidecar of a non-JSON artifact: `x.npy` -> `x.npy.json`."""
    path = Path(path)
    return path.with_name(path.name + ".json")


def sha256_file(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(chunk), b""):
            digest.update(block)
    return digest.hexdigest()


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temp folder beside `path`; it replaces `path` only if the block succeeds."""
    import shutil

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    clear_stale_temps(path)
    tmp = Path(
        tempfile.mkdtemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent)
    )
    try:
        yield tmp
        os.chmod(tmp, 0o777 & ~_UMASK)  # mkdtemp makes 0700
        if path.exists():
            shutil.rmtree(path)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)


def write_scores(folder: str | os.PathLike, files: dict[str, dict[str, Any]]) -> None:
    """A folder of DVC metrics, replaced as a whole: relative path -> flat numbers (or null).
    `dvc metrics show` prints a row per file and a column per key, so each file holds one case
    (a model, a condition) and its few numbers: the table stays readable however many cases."""
    with atomic_dir(folder) as tmp:
        for name, numbers in files.items():
            path = tmp / name.replace("/", os.sep)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(
                json.dumps(numbers, indent=2, sort_keys=True, allow_nan=False) + "\n",
                encoding="utf-8",
            )


def score_name(*parts: str) -> str:
    """`a/b/c.json`, a folder per part and a file for the last; a character that is not plain
    ASCII letters, digits or `._=,+@-` (a slash, a space) becomes `_`."""
    import re

    return "/".join(re.sub(r"[^A-Za-z0-9._=,+@-]", "_", part) for part in parts) + ".json"
