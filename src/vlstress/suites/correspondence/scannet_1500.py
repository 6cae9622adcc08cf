"""The `scannet-1500` kind: the ScanNet test pairs (SuperGlue's 1500, as LoFTR ships them and
Probe3D's ScanNetPairsDataset reads them), every pair in test.npz order."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from vlstress.errors import VlstressError
from vlstress.suites.correspondence import layout
from vlstress.suites.correspondence.pairs import Header, PairList, ViewPair, both, matrix

KIND = "scannet-1500"
EXPECTS = (
    "intrinsics.npz (scene id -> 3x3 K), test.npz (array `name`: room, sequence, frame0, frame1) "
    "and scene%04d_%02d/{color/<frame>.jpg, depth/<frame>.png, pose/<frame>.txt}"
)


def read(root: Path) -> PairList:
    intrinsics_path = layout.require(root / "intrinsics.npz", KIND, EXPECTS)
    test_path = layout.require(root / "test.npz", KIND, EXPECTS)
    with np.load(intrinsics_path) as archive:
        intrinsics = {name: archive[name] for name in archive.files}
    with np.load(test_path) as archive:
        if "name" not in archive.files:
            raise VlstressError(f"{KIND} release: {test_path} has no array `name`; {EXPECTS}")
        rows = archive["name"]
    pairs = tuple(_pair(root, intrinsics, row, index) for index, row in enumerate(rows))
    header = Header(kind=KIND, root=str(root), synthetic=layout.is_synthetic(root))
    return PairList(header, pairs)


def _pair(root: Path, intrinsics: dict[str, np.ndarray], row: np.ndarray, index: int) -> ViewPair:
    room, sequence, frame0, frame1 = (int(v) for v in row)
    scene = f"scene{room:04d}_{sequence:02d}"
    if scene not in intrinsics:
        raise VlstressError(f"{KIND} release: {root / 'intrinsics.npz'} has no entry {scene}")
    layout.require(root / scene, KIND, EXPECTS, folder=True)
    K = matrix(np.asarray(intrinsics[scene], dtype=float))
    pose0, pose1 = (_pose(root / scene / "pose" / f"{f}.txt") for f in (frame0, frame1))
    Rt_01 = np.linalg.inv(pose1) @ pose0  # poses are camera-to-world
    files = {
        part: both(
            layout.relative(layout.require(root / scene / part / f"{f}.{ext}", KIND, EXPECTS), root)
            for f in (frame0, frame1)
        )
        for part, ext in (("color", "jpg"), ("depth", "png"))
    }
    return ViewPair(
        pair_id=f"{index:04d}-{scene}-{frame0}-{frame1}",
        images=files["color"],
        depths=files["depth"],
        depth_decoding="scannet-mm",
        intrinsics=(K, K),
        Rt_01=matrix(Rt_01),
        rotation_deg=rotation_angle_deg(Rt_01[:3, :3]),
    )


def _pose(path: Path) -> np.ndarray:
    layout.require(path, KIND, EXPECTS)
    try:
        pose = np.loadtxt(path, delimiter=" ")
    except ValueError as exc:
        raise VlstressError(f"{KIND} release: pose {path} is not a 4x4 matrix ({exc})") from None
    if pose.shape != (4, 4) or not np.isfinite(pose).all():
        raise VlstressError(f"{KIND} release: pose {path} is not a finite 4x4 matrix")
    return pose


def rotation_angle_deg(R: np.ndarray) -> float:
    """The rotation's angle: acos((trace - 1) / 2), clamped, in degrees (Probe3D's
    so3_rotation_angle)."""
    cosine = (float(np.trace(R)) - 1.0) * 0.5
    return math.degrees(math.acos(min(1.0, max(-1.0, cosine))))
