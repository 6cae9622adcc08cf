"""The `spair-71k` kind: SPair-71k's keypoint pairs, sampled as Probe3D's SPairDataset does.

Probe3D evaluates each class and viewpoint-variation bucket on up to `per_bucket` pairs: the
pair files of the class and bucket, shuffled after random.seed(20), the first `per_bucket`.
Its list comes from glob, whose order depends on the file system; we SORT the pair files by
name first, so the same release gives the same pairs everywhere. Keypoints are each image's own
annotation (ImageAnnotation/<class>/<image>.json `kps`), as Probe3D reads them.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from vlstress import io
from vlstress.errors import VlstressError
from vlstress.suites.correspondence import layout
from vlstress.suites.correspondence.pairs import Header, KeypointPair, PairList, Point, both

KIND = "spair-71k"
SPLITS = {"train": "trn", "valid": "val", "test": "test"}
EXPECTS = (
    "PairAnnotation/<split>/*.json, ImageAnnotation/<class>/<image>.json and "
    "JPEGImages/<class>/<image>.jpg"
)
PAIR_KEYS = ("filename", "category", "viewpoint_variation", "trg_bndbox", "trg_imsize")


def read(
    root: Path,
    split: str = "test",
    per_bucket: int | None = 200,
    buckets: tuple[int, ...] = (0, 1, 2),
    seed: int = 20,
) -> PairList:
    folder = root / "PairAnnotation" / SPLITS.get(split, split)
    layout.require(folder, KIND, EXPECTS, folder=True)
    annotations = [_pair_annotation(path) for path in sorted(folder.glob("*.json"))]
    if not annotations:
        raise VlstressError(f"{KIND} release: no pair annotation (*.json) in {folder}")
    chosen = samples_of(annotations, per_bucket, buckets, seed)
    keypoints: dict[tuple[str, str], tuple[Point | None, ...]] = {}
    pairs = tuple(_pair(root, row, keypoints, member) for row, member in chosen)
    sampling = {"split": split, "per_bucket": per_bucket, "buckets": list(buckets)}
    return PairList(Header(KIND, str(root), sampling, seed, layout.is_synthetic(root)), pairs)


def sample(
    annotations: list[dict[str, Any]], per_bucket: int | None, buckets: tuple[int, ...], seed: int
) -> list[dict[str, Any]]:
    """Per class (sorted) and bucket: the class's pairs of that bucket in list order, shuffled
    after random.seed(seed), the first `per_bucket` (Probe3D's num_instances; None: all)."""
    chosen = []
    for category in sorted({row["category"] for row in annotations}):
        for bucket in buckets:
            rows = [
                row
                for row in annotations
                if row["category"] == category and row["viewpoint_variation"] == bucket
            ]
            # Probe3D reseeds before every shuffle: each bucket's draw is independent.
            random.seed(seed)
            random.shuffle(rows)
            chosen += rows[:per_bucket]
    return chosen


ALL = "all"  # Probe3D's sample of a class's pairs whatever their viewpoint variation


def samples_of(
    annotations: list[dict[str, Any]], per_bucket: int | None, buckets: tuple[int, ...], seed: int
) -> list[tuple[dict[str, Any], tuple[str, ...]]]:
    """Probe3D's four samples per class, each pair once with the samples it is in: the bucket
    samples (`sample`) and the class's own sample of `per_bucket` pairs of any bucket (its
    `vp_diff=None` run: the class's pairs in list order, shuffled after random.seed(seed)), which
    Probe3D reports as `all` (not the union of the buckets)."""
    member: dict[str, list[str]] = {}
    rows: dict[str, dict[str, Any]] = {}
    for row in sample(annotations, per_bucket, buckets, seed):
        rows[row["filename"]] = row
        member.setdefault(row["filename"], []).append(str(row["viewpoint_variation"]))
    for category in sorted({row["category"] for row in annotations}):
        mine = [row for row in annotations if row["category"] == category]
        random.seed(seed)
        random.shuffle(mine)
        for row in mine[:per_bucket]:
            rows.setdefault(row["filename"], row)
            member.setdefault(row["filename"], []).append(ALL)
    return [(rows[name], tuple(member[name])) for name in member]


def _pair_annotation(path: Path) -> dict[str, Any]:
    row = io.read_json(path, what=f"{KIND} pair annotation")
    if not isinstance(row, dict):
        raise VlstressError(f"{KIND} release: {path} is not a JSON object")
    for key in PAIR_KEYS:
        if key not in row:
            raise VlstressError(f"{KIND} release: {path} misses key `{key}`")
    return row


def views(row: dict[str, Any]) -> tuple[str, str]:
    """The two image names from the pair's `filename`, `<pair>-<source>-<target>:<class>`."""
    parts = str(row["filename"]).split(":")[0].split("-")
    if len(parts) != 3:
        raise VlstressError(
            f"{KIND} release: pair filename {row['filename']!r} is not <pair>-<source>-<target>"
        )
    return parts[1], parts[2]


def _pair(
    root: Path,
    row: dict[str, Any],
    cache: dict[tuple[str, str], tuple[Point | None, ...]],
    samples: tuple[str, ...] = (),
) -> KeypointPair:
    category = str(row["category"])
    names = views(row)
    images = both(
        layout.relative(
            layout.require(root / "JPEGImages" / category / f"{n}.jpg", KIND, EXPECTS), root
        )
        for n in names
    )
    for name in names:
        if (category, name) not in cache:
            cache[category, name] = _keypoints(root / "ImageAnnotation" / category / f"{name}.json")
    try:
        left, top, right, bottom = (float(v) for v in row["trg_bndbox"])
        width, height = (int(v) for v in row["trg_imsize"][:2])
    except (TypeError, ValueError):
        raise VlstressError(
            f"{KIND} release: pair {row['filename']}: trg_bndbox needs 4 numbers, "
            "trg_imsize at least 2"
        ) from None
    return KeypointPair(
        pair_id=str(row["filename"]),
        category=category,
        images=images,
        keypoints=(cache[category, names[0]], cache[category, names[1]]),
        target_box=(left, top, right, bottom),
        target_image_size=(width, height),
        viewpoint_variation=int(row["viewpoint_variation"]),
        samples=samples,
    )


def _keypoints(path: Path) -> tuple[Point | None, ...]:
    """Keypoints 0..n-1 of `kps` ({"0": [x, y] or null, ...}), as Probe3D's process_keypoints."""
    layout.require(path, KIND, EXPECTS)
    row = io.read_json(path, what=f"{KIND} image annotation")
    kps = row.get("kps") if isinstance(row, dict) else None
    if not isinstance(kps, dict):
        raise VlstressError(f"{KIND} release: {path} misses key `kps`")
    points: list[Point | None] = []
    for i in range(len(kps)):
        if str(i) not in kps:
            raise VlstressError(f"{KIND} release: {path}: `kps` misses keypoint {i}")
        xy = kps[str(i)]
        points.append(None if not xy else (float(xy[0]), float(xy[1])))
    return tuple(points)
