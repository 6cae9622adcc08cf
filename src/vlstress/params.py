"""params.yaml: load and merge (Snakemake's rule for --configfile). Only that: a step that reads
the params files depends on this small module, not on the checks (`vlstress.params_check`), which
know every suite."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

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
