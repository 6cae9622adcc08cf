"""Per-item outcomes: what each image (or query) of an evaluation came to, kept beside its record.

A record holds a metric (top-1 = 63.3 on 30 images); its outcomes file holds the items behind it
(image 7: correct, the truth ranked 1st), so an interval, a bootstrap or a paired test between two
models is computed afterwards without rerunning a model. A record file `x.json` holding N records
has the outcomes file `x.outcomes.npz` holding N blocks, block i for record i.

The file is a numpy `.npz` written deterministically (fixed zip entry times, sorted entries): the
same outcomes give the same bytes. Entries: `header` (JSON text: schema, and per block its unit
and column names) and `<block>/<column>` (a 1-D array; every column of a block has one value per
item, in the evaluation's item order). `np.load` reads it without pickle.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from vlstress.errors import VlstressError
from vlstress.io import atomic_path

SCHEMA = "vlstress.outcomes/1"
SUFFIX = ".outcomes.npz"
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # the zip format's earliest time: no clock in the bytes


@dataclass(frozen=True)
class Outcomes:
    """The items of one record: `unit` names what an item is ("image", "query", "pair"); each
    column is one value per item (`correct`: bool, `truth_rank`: the truth's 1-based rank,
    `confidence`, `score`, ...)."""

    unit: str
    columns: Mapping[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        lengths = {name: len(np.asarray(values)) for name, values in self.columns.items()}
        if not lengths:
            raise VlstressError(f"outcomes of unit {self.unit!r}: no columns")
        if len(set(lengths.values())) != 1:
            raise VlstressError(
                f"outcomes of unit {self.unit!r}: columns of different lengths {lengths}"
            )
        for name, values in self.columns.items():
            if np.asarray(values).ndim != 1:
                raise VlstressError(f"outcomes column {name!r}: expected one value per item")

    @property
    def n(self) -> int:
        return len(next(iter(self.columns.values())))

    def column(self, name: str, source: str = "<outcomes>") -> np.ndarray:
        if name not in self.columns:
            raise VlstressError(
                f"outcomes {source}: no column {name!r} (has {', '.join(sorted(self.columns))})"
            )
        return np.asarray(self.columns[name])


def outcomes_path(record_path: str | os.PathLike) -> Path:
    """`results/metrics/m/zeroshot-demo.json` -> `results/metrics/m/zeroshot-demo.outcomes.npz`."""
    path = Path(record_path)
    stem = path.name[: -len(".json")] if path.name.endswith(".json") else path.name
    return path.with_name(stem + SUFFIX)


def _npy_bytes(values: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, np.ascontiguousarray(values), allow_pickle=False)
    return buffer.getvalue()


def write_outcomes(path: str | os.PathLike, blocks: Sequence[Outcomes]) -> None:
    """Write the outcomes of a record file's records (block i for record i) atomically and
    deterministically; nothing is written on error."""
    if not blocks:
        raise VlstressError(f"outcomes {path}: nothing to write")
    header = {
        "schema": SCHEMA,
        "blocks": [
            {"unit": block.unit, "n": block.n, "columns": sorted(block.columns)} for block in blocks
        ],
    }
    entries = {"header": np.array([json.dumps(header, sort_keys=True)])}
    for i, block in enumerate(blocks):
        for name, values in block.columns.items():
            array = np.asarray(values)
            if array.dtype == object:
                raise VlstressError(f"outcomes {path}: column {name!r} is not numeric or text")
            entries[f"{i}/{name}"] = array
    with atomic_path(path) as tmp:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for name in sorted(entries):
                info = zipfile.ZipInfo(f"{name}.npy", date_time=_ZIP_TIME)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                archive.writestr(info, _npy_bytes(entries[name]))


def read_outcomes(path: str | os.PathLike) -> list[Outcomes]:
    """The blocks of an outcomes file, in record order; any problem is a VlstressError naming it."""
    path = Path(path)
    if not path.is_file():
        raise VlstressError(
            f"outcomes {path}: no such file (re-run the evaluation step that writes its record)"
        )
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise VlstressError(f"outcomes {path}: not a readable .npz file ({exc})") from None
    try:
        header = json.loads(str(arrays.pop("header").reshape(-1)[0]))
    except (KeyError, IndexError, json.JSONDecodeError):
        raise VlstressError(f"outcomes {path}: no valid header entry") from None
    if header.get("schema") != SCHEMA:
        raise VlstressError(
            f"outcomes {path}: schema {header.get('schema')!r}, expected {SCHEMA!r}; re-run its "
            "evaluation step"
        )
    blocks = []
    for i, block in enumerate(header.get("blocks") or []):
        try:
            columns = {name: arrays[f"{i}/{name}"] for name in block["columns"]}
        except KeyError as exc:
            raise VlstressError(f"outcomes {path}: block {i} lacks column {exc}") from None
        found = Outcomes(block["unit"], columns)
        if found.n != block["n"]:
            raise VlstressError(
                f"outcomes {path}: block {i} has {found.n} items, its header says {block['n']}"
            )
        blocks.append(found)
    if not blocks:
        raise VlstressError(f"outcomes {path}: no blocks")
    return blocks


@dataclass(frozen=True)
class Resampling:
    """What a bootstrap of a metric resamples and recomputes (scipy.stats.bootstrap's terms).

    `samples`: arrays of the items; `paired`: True when they are columns of one sample, resampled
    together (confidence and correctness of each image), False when they are independent samples
    resampled each within itself (in- and out-of-distribution images: strata). `statistic` takes
    the arrays in that order and returns the metric in the record's units; `vectorized`: it also
    takes arrays of resamples (items on the last axis) and returns one value per resample."""

    samples: tuple[np.ndarray, ...]
    statistic: Callable[..., Any]
    paired: bool = True
    vectorized: bool = False
