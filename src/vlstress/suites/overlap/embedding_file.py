"""A training collection given as embeddings (`overlap.train.kind: embeddings`): the `.npy` file of
the detector's L2-normalised image embeddings, checked with errors that name it.

`header` reads the shape and dtype from the file's header alone (`numpy.lib.format`), so the
params check refuses an empty file, another format, a non-float dtype, a shape other than
rows x width, no rows, or a width other than the detector's before any step runs; `load` reads
the rows and checks them (a truncated file, norms far from 1).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vlstress.errors import VlstressError

WHAT = "training embeddings"


def header(path: Path, width: int | None = None) -> tuple[tuple[int, ...], np.dtype]:
    """(shape, dtype) of the `.npy` file at `path`, checked: a float array of rows x width with at
    least one row, of `width` columns when given (the detector's embedding width)."""
    from numpy.lib import format as npy

    path = Path(path)
    if not path.is_file():
        raise VlstressError(f"{WHAT} not found: {path}" + (" (a folder)" if path.is_dir() else ""))
    if path.stat().st_size == 0:
        raise VlstressError(f"{WHAT} {path} are empty (0 bytes): expected a .npy file")
    try:
        with path.open("rb") as handle:
            version = npy.read_magic(handle)
            if version == (1, 0):
                shape, _, dtype = npy.read_array_header_1_0(handle)
            elif version == (2, 0):
                shape, _, dtype = npy.read_array_header_2_0(handle)
            else:  # 3.0: utf-8 field names, same layout
                shape, _, dtype = npy._read_array_header(handle, version)  # type: ignore[attr-defined]
    except (ValueError, OSError, EOFError, SyntaxError) as exc:
        raise VlstressError(
            f"{WHAT} {path} are not a .npy file (numpy.save's format): {exc}"
        ) from None
    if dtype.kind != "f":
        raise VlstressError(
            f"{WHAT} {path} have dtype {dtype}: expected floats (float32, as the detector writes "
            "them)"
        )
    if len(shape) != 2:
        raise VlstressError(
            f"{WHAT} {path} have shape {tuple(shape)}: expected rows x width (images x dimensions)"
        )
    if shape[0] == 0 or shape[1] == 0:
        raise VlstressError(f"{WHAT} {path} have no {'rows' if shape[0] == 0 else 'columns'} "
                            f"(shape {tuple(shape)})")  # fmt: skip
    if width is not None and shape[1] != width:
        raise VlstressError(
            f"{WHAT} {path} have width {shape[1]}; the detector's embeddings have {width} "
            "dimensions: not the detector's embeddings"
        )
    return tuple(shape), dtype


def load(path: Path, width: int | None = None) -> np.ndarray:
    """The rows of the file (float32), checked: the header (`header`), the data all there, every
    row of unit norm (cosine similarity is an inner product of unit vectors)."""
    header(path, width)
    try:
        array = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise VlstressError(f"{WHAT} {path} are truncated or unreadable: {exc}") from None
    norms = np.linalg.norm(array.astype(np.float64), axis=1)
    if not np.all(np.isfinite(norms)) or not np.allclose(norms, 1.0, atol=1e-3):
        raise VlstressError(
            f"{WHAT} {path} are not L2-normalised (norms {np.nanmin(norms):.3f}.."
            f"{np.nanmax(norms):.3f}): cosine similarity needs unit vectors"
        )
    return np.ascontiguousarray(array, dtype=np.float32)
