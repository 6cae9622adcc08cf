"""Embedding files as the evaluation steps read them: `<name>.npy` + sidecar `<name>.npy.json`.

The sidecar's `provenance.model` block (models.describe) says which model produced the
rows; every input of one evaluation must come from the same model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from vlstress.errors import VlstressError
from vlstress.io import read_json, sha256_file, sidecar


def load_embeddings(path: Path, expected_rows: int, what: str) -> tuple[np.ndarray, dict]:
    """(array, sidecar metadata) of an embedding file with `expected_rows` rows; `what` names it in
    errors."""
    path = Path(path)
    if not path.is_file():
        raise VlstressError(f"{what} embeddings not found: {path}")
    array = np.load(path, allow_pickle=False)
    if array.ndim != 2 or array.shape[0] != expected_rows:
        raise VlstressError(
            f"{what} embeddings {path}: shape {array.shape}, expected {expected_rows} rows; "
            "re-run the embed step"
        )
    return array, read_json(sidecar(path), f"{what} embeddings sidecar")


def model_block(path: Path, meta: dict) -> dict[str, Any]:
    """The `provenance.model` block of an embedding sidecar."""
    try:
        return meta["provenance"]["model"]
    except (KeyError, TypeError):
        raise VlstressError(
            f"{path}: its sidecar names no model (provenance.model); re-run the embed step"
        ) from None


def same_model(
    reference_path: Path, reference_meta: dict, *others: tuple[Path, dict]
) -> dict[str, Any]:
    """The reference's model block, after checking that every (path, meta) of `others` has the same
    one."""
    model = model_block(reference_path, reference_meta)
    for path, meta in others:
        if model_block(path, meta) != model:
            raise VlstressError(f"{reference_path} and {path} come from different models")
    return model


def check_embedded_from(path: Path, meta: dict, source: Path, what: str, step: str) -> None:
    """Error unless the embeddings at `path` were computed from the file `source` (checksum in their
    sidecar).

    Sidecars that record no inputs pass (nothing to compare).
    """
    inputs = (meta.get("provenance") or {}).get("inputs") or {}
    if inputs and sha256_file(source) not in inputs.values():
        raise VlstressError(
            f"{path} was embedded from another {what} than {source}; re-run `vlstress {step}`"
        )
