"""The `navi` kind: NAVI v1's in-the-wild collections, paired as Probe3D's navi.py does.

Probe3D (split "test": collection wild_set, all images) keeps the objects that have a wild_set
and at least one more collection, pairs each image with one drawn uniformly (torch.manual_seed(8),
torch.multinomial) among the images of its collection at a relative angle in (0, max_angle],
then keeps every 4th image. Our one difference: objects and image ids are SORTED before that,
where Probe3D takes os.listdir / glob order, which depends on the file system; the draws follow
the order, so only sorted ids give the same pairs everywhere.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from vlstress import io
from vlstress.errors import VlstressError
from vlstress.suites.correspondence import layout
from vlstress.suites.correspondence.pairs import Header, PairList, ViewPair, both, matrix

KIND = "navi"
COLLECTION = "wild_set"
EXPECTS = (
    "<object>/wild_set/{images/<id>.jpg, depth/<id>.png, annotations.json} "
    "and at least one <object>/multiview_* folder per object"
)


def read(
    root: Path,
    max_angle: float = 120.0,
    seed: int = 8,
    every: int = 4,
    image_prefix: str = "downsampled_",
) -> PairList:
    """`image_prefix` names the images and depths read (Probe3D reads the copies its
    resize_navi.py writes, `downsampled_<id>`); the annotations refer to the originals."""
    layout.require(root, KIND, EXPECTS, folder=True)
    collections = {obj: _collection(root / obj / COLLECTION) for obj in objects(root)}
    if not collections:
        raise VlstressError(
            f"{KIND} release: no object under {root} has a {COLLECTION} folder and a "
            f"multiview_* folder; a {KIND} release has {EXPECTS}"
        )
    views = {obj: [img for img, _ in images] for obj, images in collections.items()}
    rotations = {obj: [rotation(a) for _, a in images] for obj, images in collections.items()}
    partners = draw_partners(views, rotations, max_angle, seed)
    instances = [(obj, img) for obj in views for img in views[obj]][::every]
    pairs = tuple(
        _pair(root, obj, img, partners[obj][img], dict(collections[obj]), image_prefix)
        for obj, img in instances
    )
    sampling = {"max_angle": max_angle, "every": every, "image_prefix": image_prefix}
    header = Header(KIND, str(root), sampling, seed, layout.is_synthetic(root))
    return PairList(header, pairs)


def objects(root: Path) -> list[str]:
    """Sorted objects with a wild_set and another collection (Probe3D skips the rest)."""
    found = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        names = [c.name for c in folder.iterdir() if c.is_dir()]
        multiview = [n for n in names if n.startswith("multiview_")]
        if COLLECTION in names and multiview:
            found.append(folder.name)
    return found


def _collection(folder: Path) -> list[tuple[str, dict[str, Any]]]:
    """(image id, annotation) sorted by id; ids with "_" are resized copies (Probe3D drops them)."""
    images = layout.require(folder / "images", KIND, EXPECTS, folder=True)
    layout.require(folder / "depth", KIND, EXPECTS, folder=True)
    path = layout.require(folder / "annotations.json", KIND, EXPECTS)
    rows = io.read_json(path, what=f"{KIND} annotations")
    try:
        annotations = {row["filename"].split(".")[0]: row for row in rows}
    except (KeyError, TypeError, AttributeError):
        raise VlstressError(f"{KIND} release: {path}: every entry needs a `filename`") from None
    ids = sorted({f.split(".")[0] for f in (p.name for p in images.iterdir()) if "jpg" in f})
    ids = [i for i in ids if "_" not in i]
    if len(ids) < 2:
        raise VlstressError(f"{KIND} release: {images} has {len(ids)} image(s); pairs need 2")
    missing = [i for i in ids if i not in annotations]
    if missing:
        raise VlstressError(f"{KIND} release: {path} has no entry for image(s) {missing[:5]}")
    for i in ids:
        for key in ("camera", "image_size"):
            if key not in annotations[i]:
                raise VlstressError(f"{KIND} release: {path}: entry {i} misses `{key}`")
        for key in ("q", "t", "focal_length"):
            if key not in annotations[i]["camera"]:
                raise VlstressError(f"{KIND} release: {path}: entry {i} misses `camera.{key}`")
    return [(i, annotations[i]) for i in ids]


def rotation(annotation: dict[str, Any]) -> np.ndarray:
    """The camera's 3x3 rotation from its quaternion (w, x, y, z), in float32 as Probe3D's
    quaternion_to_rotation_matrix computes it: the angles that decide eligibility come from it."""
    import torch

    q = torch.as_tensor(annotation["camera"]["q"], dtype=torch.float32)
    w, x, y, z = torch.unbind(q, dim=-1)
    s = 2.0 / (q * q).sum(dim=-1)
    rows = [
        [1 - s * (y**2 + z**2), s * (x * y - z * w), s * (x * z + y * w)],
        [s * (x * y + z * w), 1 - s * (x**2 + z**2), s * (y * z - x * w)],
        [s * (x * z - y * w), s * (y * z + x * w), 1 - s * (x**2 + y**2)],
    ]
    return torch.stack([torch.stack(r) for r in rows]).numpy()


def draw_partners(
    views: dict[str, list[str]],
    rotations: dict[str, list[np.ndarray]],
    max_angle: float,
    seed: int,
) -> dict[str, dict[str, str]]:
    """Each image's partner: one torch.multinomial draw over the images of its collection at a
    relative angle in (0, max_angle], in object then image order after torch.manual_seed(seed)."""
    import torch

    torch.manual_seed(seed)
    partners: dict[str, dict[str, str]] = {}
    for obj, ids in views.items():
        rots = torch.as_tensor(np.stack(rotations[obj]), dtype=torch.float32)
        partners[obj] = {}
        for i, img in enumerate(ids):
            rots_ij = torch.bmm(rots[i, None].repeat(len(rots), 1, 1), rots.permute(0, 2, 1))
            trace = rots_ij[:, 0, 0] + rots_ij[:, 1, 1] + rots_ij[:, 2, 2]
            angle = (0.5 * trace - 0.5).clamp(min=-1, max=1).acos() * 180 / np.pi
            angle[angle > max_angle] = 0
            angle[angle > 0] = 1
            if not bool(angle.any()):
                raise VlstressError(
                    f"{KIND} release: image {img} of {obj} has no other image within "
                    f"(0, {max_angle}] degrees to pair with"
                )
            partners[obj][img] = ids[int(torch.multinomial(angle, 1).item())]
    return partners


def object_to_camera(annotation: dict[str, Any]) -> np.ndarray:
    """4x4 [R | t] of a view with t in metres (the annotation's is in millimetres)."""
    Rt = np.eye(4)
    Rt[:3, :3] = rotation(annotation)
    Rt[:3, 3] = np.asarray(annotation["camera"]["t"], dtype=float) / 1000.0
    return Rt


def intrinsics(annotation: dict[str, Any]) -> tuple[tuple[float, ...], ...]:
    """K of the annotated (original) image: focal length f, principal point at its centre
    (NAVI gives none; Probe3D assumes the centre), so K also carries the image size."""
    height, width = (float(v) for v in annotation["image_size"][:2])
    f = float(annotation["camera"]["focal_length"])
    return ((f, 0.0, width / 2), (0.0, f, height / 2), (0.0, 0.0, 1.0))


def _pair(
    root: Path, obj: str, img0: str, img1: str, annotations: dict[str, Any], prefix: str
) -> ViewPair:
    Rt_0, Rt_1 = (object_to_camera(annotations[i]) for i in (img0, img1))
    Rt_01 = Rt_1 @ np.linalg.inv(Rt_0)
    folder = root / obj / COLLECTION
    images, depths = (
        both(
            layout.relative(
                layout.require(folder / part / f"{prefix}{i}.{ext}", KIND, EXPECTS), root
            )
            for i in (img0, img1)
        )
        for part, ext in (("images", "jpg"), ("depth", "png"))
    )
    cosine = (float(np.trace(Rt_01[:3, :3])) - 1.0) * 0.5
    return ViewPair(
        pair_id=f"{obj}/{img0}-{img1}",
        images=images,
        depths=depths,
        depth_decoding="navi-disparity",
        intrinsics=(intrinsics(annotations[img0]), intrinsics(annotations[img1])),
        Rt_01=matrix(Rt_01),
        rotation_deg=math.degrees(math.acos(min(1.0, max(-1.0, cosine)))),
    )
