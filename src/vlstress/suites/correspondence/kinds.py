"""Correspondence release kinds: each reads its release's own layout into a pair list.

A reader refuses a folder that lacks what its kind expects, naming the missing file or folder.
Adding a kind is one module with `read(root, **sampling) -> PairList` and one entry in KINDS.
"""

from __future__ import annotations

import importlib
import inspect
import os
from pathlib import Path
from typing import Any

from vlstress.errors import VlstressError
from vlstress.suites.correspondence.pairs import PairList

KINDS: dict[str, str] = {
    "scannet-1500": "vlstress.suites.correspondence.scannet_1500",
    "navi": "vlstress.suites.correspondence.navi",
    "spair-71k": "vlstress.suites.correspondence.spair_71k",
}


def read_release(kind: str, root: str | os.PathLike, **sampling: Any) -> PairList:
    """The pair list of the release of `kind` in `root` (sampling settings as the kind takes)."""
    if kind not in KINDS:
        raise VlstressError(f"unknown correspondence kind {kind!r}; known: {', '.join(KINDS)}")
    path = Path(root)
    if not path.is_dir():
        raise VlstressError(f"{kind} release: folder not found: {path}")
    read = importlib.import_module(KINDS[kind]).read
    known = list(inspect.signature(read).parameters)[1:]
    unknown = sorted(set(sampling) - set(known))
    if unknown:
        raise VlstressError(
            f"{kind} release: unknown sampling setting(s) {', '.join(unknown)}; "
            f"known: {', '.join(known) or 'none'}"
        )
    return read(path, **sampling)
