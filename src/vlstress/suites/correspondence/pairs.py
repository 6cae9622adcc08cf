"""The pair list of a correspondence dataset: typed pairs and the one JSON file that holds them.

A file is a header (the release kind, its root, the sampling settings and seed, the number of
pairs, whether the data are synthetic) and the pairs. Paths inside a pair are relative to the
release root, so the same release gives the same bytes wherever it lies.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from vlstress import io
from vlstress.errors import VlstressError

FORMAT = 1

Matrix = tuple[tuple[float, ...], ...]
Point = tuple[float, float]
T = TypeVar("T")


def both(values: Iterable[T]) -> tuple[T, T]:
    """The two values of a pair, one per view (an error if there are not exactly two)."""
    first, second = values
    return first, second


def matrix(values: Any) -> Matrix:
    """Rows of floats (a NumPy array or nested lists) as a Matrix."""
    return tuple(tuple(float(v) for v in row) for row in values)


@dataclass(frozen=True)
class ViewPair:
    """Two RGB-D views of one scene or object with their relative pose.

    `Rt_01` (4x4) maps view 0's camera coordinates to view 1's: x1 = R x0 + t. `intrinsics` are
    each view's 3x3 K for its image as stored. `depth_decoding` says how a depth file becomes
    metres: "scannet-mm" (uint16 millimetres) or "navi-disparity" (NAVI's uint16 disparity).
    """

    pair_id: str
    images: tuple[str, str]
    depths: tuple[str, str]
    depth_decoding: str
    intrinsics: tuple[Matrix, Matrix]
    Rt_01: Matrix
    rotation_deg: float


@dataclass(frozen=True)
class KeypointPair:
    """Two images of one category with annotated keypoints (SPair-71k style).

    `keypoints[v][i]` is keypoint i of view v as (x, y) pixels, or None where it is not visible.
    `target_box` is (left, top, right, bottom) in the target (view 1) image; `target_image_size`
    the first two numbers of the annotation's image size (SPair: width, height); the error
    threshold scales with `threshold_scale`.
    """

    pair_id: str
    category: str
    images: tuple[str, str]
    keypoints: tuple[tuple[Point | None, ...], tuple[Point | None, ...]]
    target_box: tuple[float, float, float, float]
    target_image_size: tuple[int, int]
    viewpoint_variation: int
    # the samples the pair was drawn in: its viewpoint bucket ("0", "1", "2") and/or "all"
    # (Probe3D's per-class sample of any bucket); empty: its bucket's only
    samples: tuple[str, ...] = ()

    @property
    def drawn_in(self) -> tuple[str, ...]:
        return self.samples or (str(self.viewpoint_variation),)

    @property
    def threshold_scale(self) -> float:
        """max(target box side) / max(target image side): Probe3D's PCK scale without a crop."""
        left, top, right, bottom = self.target_box
        return float(max(right - left, bottom - top)) / max(self.target_image_size)


@dataclass(frozen=True)
class Header:
    kind: str
    root: str
    sampling: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    synthetic: bool = False


@dataclass(frozen=True)
class PairList:
    header: Header
    pairs: tuple[ViewPair, ...] | tuple[KeypointPair, ...]

    def resolve(self, relative: str, root: str | os.PathLike | None = None) -> Path:
        """A pair's path under the release root (the header's, unless `root` is given)."""
        return Path(root if root is not None else self.header.root) / relative


def write(path: str | os.PathLike, pair_list: PairList) -> None:
    io.write_json(path, to_json(pair_list))


def to_json(pair_list: PairList) -> dict[str, Any]:
    header = pair_list.header
    return {
        "format": FORMAT,
        "kind": header.kind,
        "root": header.root,
        "sampling": header.sampling,
        "seed": header.seed,
        "synthetic": header.synthetic,
        "n_pairs": len(pair_list.pairs),
        "pairs": [_pair_json(pair) for pair in pair_list.pairs],
    }


def _pair_json(pair: ViewPair | KeypointPair) -> dict[str, Any]:
    if isinstance(pair, ViewPair):
        return {
            "type": "view",
            "pair_id": pair.pair_id,
            "images": list(pair.images),
            "depths": list(pair.depths),
            "depth_decoding": pair.depth_decoding,
            "intrinsics": [[list(row) for row in k] for k in pair.intrinsics],
            "Rt_01": [list(row) for row in pair.Rt_01],
            "rotation_deg": pair.rotation_deg,
        }
    return {
        "type": "keypoint",
        "pair_id": pair.pair_id,
        "category": pair.category,
        "images": list(pair.images),
        "keypoints": [[None if p is None else list(p) for p in view] for view in pair.keypoints],
        "target_box": list(pair.target_box),
        "target_image_size": list(pair.target_image_size),
        "viewpoint_variation": pair.viewpoint_variation,
        "samples": list(pair.samples),
    }


def read(path: str | os.PathLike) -> PairList:
    """The pair list in `path`; a malformed file or a missing key is named with the file."""
    data = io.read_json(path, what="correspondence pair list", strict=True)
    where = str(path)
    if not isinstance(data, dict):
        raise VlstressError(f"pair list {where}: expected a JSON object")
    if _get(data, "format", where) != FORMAT:
        raise VlstressError(f"pair list {where}: format {data['format']!r}, expected {FORMAT}")
    header = Header(
        kind=str(_get(data, "kind", where)),
        root=str(_get(data, "root", where)),
        sampling=dict(_get(data, "sampling", where)),
        seed=_get(data, "seed", where),
        synthetic=bool(_get(data, "synthetic", where)),
    )
    rows = _get(data, "pairs", where)
    pairs = tuple(_pair(row, f"{where}: pairs[{i}]") for i, row in enumerate(rows))
    if _get(data, "n_pairs", where) != len(pairs):
        raise VlstressError(f"pair list {where}: n_pairs {data['n_pairs']} but {len(pairs)} pairs")
    views = tuple(pair for pair in pairs if isinstance(pair, ViewPair))
    keypoints = tuple(pair for pair in pairs if isinstance(pair, KeypointPair))
    if views and keypoints:
        raise VlstressError(f"pair list {where}: mixes view pairs and keypoint pairs")
    return PairList(header, views or keypoints)


def _get(row: Any, key: str, where: str) -> Any:
    if not isinstance(row, dict):
        raise VlstressError(f"pair list {where}: expected a JSON object")
    if key not in row:
        raise VlstressError(f"pair list {where}: missing key `{key}`")
    return row[key]


def _pair(row: Any, where: str) -> ViewPair | KeypointPair:
    kind = _get(row, "type", where)
    try:
        if kind == "view":
            return ViewPair(
                pair_id=str(_get(row, "pair_id", where)),
                images=_two(_get(row, "images", where), str),
                depths=_two(_get(row, "depths", where), str),
                depth_decoding=str(_get(row, "depth_decoding", where)),
                intrinsics=_two(_get(row, "intrinsics", where), matrix),
                Rt_01=matrix(_get(row, "Rt_01", where)),
                rotation_deg=float(_get(row, "rotation_deg", where)),
            )
        if kind == "keypoint":
            box_values = [float(v) for v in _get(row, "target_box", where)]
            size_values = [int(v) for v in _get(row, "target_image_size", where)]
            if len(box_values) != 4 or len(size_values) != 2:
                raise ValueError("target_box needs 4 numbers and target_image_size 2")
            left, top, right, bottom = box_values
            box = (left, top, right, bottom)
            size = (size_values[0], size_values[1])
            return KeypointPair(
                pair_id=str(_get(row, "pair_id", where)),
                category=str(_get(row, "category", where)),
                images=_two(_get(row, "images", where), str),
                keypoints=_two(_get(row, "keypoints", where), _points),
                target_box=box,
                target_image_size=size,
                viewpoint_variation=int(_get(row, "viewpoint_variation", where)),
                samples=tuple(str(v) for v in row.get("samples", ())),
            )
    except (TypeError, ValueError) as exc:
        raise VlstressError(f"pair list {where}: malformed pair ({exc})") from None
    raise VlstressError(f"pair list {where}: unknown pair type {kind!r} (view or keypoint)")


def _two(values: Any, convert: Any) -> tuple[Any, Any]:
    if not isinstance(values, list) or len(values) != 2:
        raise ValueError(f"expected two values, one per view, got {values!r}")
    return convert(values[0]), convert(values[1])


def _points(points: Any) -> tuple[Point | None, ...]:
    return tuple(None if p is None else (float(p[0]), float(p[1])) for p in points)
