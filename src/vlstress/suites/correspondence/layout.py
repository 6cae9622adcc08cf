"""Checks that a release folder has the layout its kind expects, naming what is missing."""

from __future__ import annotations

from pathlib import Path

from vlstress.errors import VlstressError

SYNTHETIC_MARKER = "SYNTHETIC.json"


def require(path: Path, kind: str, expects: str, folder: bool = False) -> Path:
    """`path` itself, or an error naming it, the kind and the layout that kind expects."""
    found = path.is_dir() if folder else path.is_file()
    if not found:
        what = "folder" if folder else "file"
        raise VlstressError(
            f"{kind} release: missing {what} {path}; a {kind} release has {expects}"
        )
    return path


def is_synthetic(root: Path) -> bool:
    """Whether the release was written by `synthetic` (its root holds the marker file)."""
    return (root / SYNTHETIC_MARKER).is_file()


def relative(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()
