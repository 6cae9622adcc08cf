"""Synthetic RGB-D releases for tests and the demo: a textured box on a textured plane, rendered
per pixel with NumPy (ray against plane and box) from cameras at known poses, written in the
`scannet-1500` and `spair-71k` layouts so the real readers read them.

Every release says it is synthetic (SYNTHETIC.json at its root, and the pair lists read from it
say so). The same arguments give the same bytes: seeded textures, fixed zip dates in the .npz
files, no timestamps. Cameras orbit the box about the vertical axis, so a pair's relative
rotation is exactly the azimuth between its views (spread over 0-90 degrees: every rotation bin
holds pairs).
"""

from __future__ import annotations

import io as bytes_io
import math
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from vlstress import io
from vlstress.suites.correspondence.layout import SYNTHETIC_MARKER

TEXTURE_CELLS = 64  # lattice nodes per axis; the texture repeats every TEXTURE_CELLS * cell metres
PLANE = 0
BOX = 1
NOTHING = -1


@dataclass(frozen=True)
class Scene:
    """A box [-x, x] x [-y, y] x [0, height] (metres) on the plane z = 0, which ends at
    |x|, |y| <= plane_extent; textures from `seed`."""

    seed: int
    box: tuple[float, float, float] = (0.4, 0.3, 0.5)
    plane_extent: float = 2.5
    cell: float = 0.06


@dataclass(frozen=True)
class Camera:
    """Pinhole camera: K (3x3), pose (4x4 camera-to-world; camera x right, y down, z forward),
    image size (height, width)."""

    K: np.ndarray
    pose: np.ndarray
    size: tuple[int, int]


@dataclass(frozen=True)
class View:
    rgb: np.ndarray  # H x W x 3 uint8
    depth: np.ndarray  # H x W float metres (camera z), 0 where nothing is hit
    world: np.ndarray  # H x W x 3 world points, NaN where nothing is hit
    surface: np.ndarray  # H x W: PLANE, BOX or NOTHING


def intrinsics(size: tuple[int, int], focal: float) -> np.ndarray:
    height, width = size
    return np.array([[focal, 0, width / 2], [0, focal, height / 2], [0, 0, 1]], dtype=float)


def orbit_pose(
    azimuth_deg: float, elevation_deg: float, distance: float, target: tuple[float, float, float]
) -> np.ndarray:
    """Camera-to-world pose of a camera on a sphere around `target`, looking at it, upright."""
    az, el = math.radians(azimuth_deg), math.radians(elevation_deg)
    centre = np.asarray(target) + distance * np.array(
        [math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)]
    )
    forward = np.asarray(target) - centre
    forward /= np.linalg.norm(forward)
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    down = np.cross(forward, right)
    pose = np.eye(4)
    pose[:3, :3] = np.stack([right, down, forward], axis=1)
    pose[:3, 3] = centre
    return pose


def rays(camera: Camera) -> tuple[np.ndarray, np.ndarray]:
    """Origin (3,) and world directions (H x W x 3) through pixel centres, camera z = 1."""
    height, width = camera.size
    u, v = np.meshgrid(np.arange(width) + 0.5, np.arange(height) + 0.5)
    pixels = np.stack([u, v, np.ones_like(u)], axis=-1)
    directions = pixels @ np.linalg.inv(camera.K).T @ camera.pose[:3, :3].T
    return camera.pose[:3, 3], directions


def box_entry(scene: Scene, origin: np.ndarray, directions: np.ndarray) -> np.ndarray:
    """Distance along each ray (in its direction's units) where it enters the box; inf if never."""
    half_x, half_y, height = scene.box
    low, high = np.array([-half_x, -half_y, 0.0]), np.array([half_x, half_y, height])
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = (low - origin) / directions
        t2 = (high - origin) / directions
    near = np.nanmax(np.minimum(t1, t2), axis=-1)
    far = np.nanmin(np.maximum(t1, t2), axis=-1)
    return np.where((near <= far) & (near > 0), near, np.inf)


def world_points(scene: Scene, camera: Camera) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each pixel's true world point (H x W x 3, NaN where the ray hits nothing), its camera
    depth (0 there) and the surface it lies on."""
    origin, directions = rays(camera)
    t_box = box_entry(scene, origin, directions)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_plane = np.where(directions[..., 2] < 0, -origin[2] / directions[..., 2], np.inf)
    hit = origin + t_plane[..., None] * directions
    on_plane = np.isfinite(t_plane) & (np.abs(hit[..., :2]) <= scene.plane_extent).all(axis=-1)
    t_plane = np.where(on_plane, t_plane, np.inf)
    t = np.minimum(t_box, t_plane)
    surface = np.where(np.isinf(t), NOTHING, np.where(t_box <= t_plane, BOX, PLANE))
    depth = np.where(np.isfinite(t), t, 0.0)  # camera z, as each direction has camera z = 1
    world = np.where(np.isfinite(t)[..., None], origin + depth[..., None] * directions, np.nan)
    return world, depth, surface


def texture(scene: Scene, world: np.ndarray, surface: np.ndarray) -> np.ndarray:
    """Seeded value noise: random colours on a 3D lattice, trilinear between nodes; the box's
    lattice differs from the plane's. Colours depend on the world point only: views agree."""
    rng = np.random.default_rng(scene.seed)
    lattices = rng.integers(0, 256, size=(2, TEXTURE_CELLS, TEXTURE_CELLS, TEXTURE_CELLS, 3))
    rgb = np.zeros(world.shape, dtype=float)
    coords = np.nan_to_num(world) / scene.cell
    base = np.floor(coords).astype(int)
    frac = coords - base
    for which in (PLANE, BOX):
        mask = surface == which
        lattice = lattices[which].astype(float)
        total = np.zeros((int(mask.sum()), 3))
        for corner in np.ndindex(2, 2, 2):
            index = (base[mask] + corner) % TEXTURE_CELLS
            weight = np.prod(np.where(corner, frac[mask], 1 - frac[mask]), axis=-1)
            total += weight[:, None] * lattice[index[:, 0], index[:, 1], index[:, 2]]
        rgb[mask] = total
    return np.clip(np.round(rgb), 0, 255).astype(np.uint8)


FACE_SHADE = (0.6, 0.8, 1.0)  # box faces facing x, y, up: each face its own brightness


def shade(scene: Scene, world: np.ndarray, surface: np.ndarray) -> np.ndarray:
    """Per-pixel brightness: 1 on the plane, by face on the box (which axis the point lies on
    the box's boundary of), so the box's edges show; independent of the view, as the texture."""
    half_x, half_y, height = scene.box
    centre, half = np.array([0.0, 0.0, height / 2]), np.array([half_x, half_y, height / 2])
    axis = np.argmax(np.abs(np.nan_to_num(world) - centre) / half, axis=-1)
    return np.where(surface == BOX, np.asarray(FACE_SHADE)[axis], 1.0)


def render(scene: Scene, camera: Camera) -> View:
    world, depth, surface = world_points(scene, camera)
    rgb = texture(scene, world, surface) * shade(scene, world, surface)[..., None]
    return View(np.round(rgb).astype(np.uint8), depth, world, surface)


def _marker(root: Path, layout_kind: str, description: str) -> None:
    io.write_json(
        root / SYNTHETIC_MARKER,
        {"synthetic": True, "layout": layout_kind, "description": description},
    )


def _npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """An .npz numpy reads, with fixed zip dates (np.savez stamps the time: bytes would vary)."""
    with io.atomic_path(path) as tmp, zipfile.ZipFile(tmp, "w") as archive:
        for name, array in sorted(arrays.items()):
            buffer = bytes_io.BytesIO()
            np.lib.format.write_array(buffer, np.asarray(array), allow_pickle=False)
            archive.writestr(
                zipfile.ZipInfo(f"{name}.npy", (1980, 1, 1, 0, 0, 0)), buffer.getvalue()
            )


def _save_image(path: Path, array: np.ndarray, **options) -> None:
    with io.atomic_path(path) as tmp:
        Image.fromarray(array).save(
            tmp, format="JPEG" if path.suffix == ".jpg" else "PNG", **options
        )


SCANNET_ANGLES = (5.0, 12.0, 20.0, 35.0, 50.0, 75.0)


def scannet_scenes(
    angles: tuple[float, ...] = SCANNET_ANGLES,
    n_scenes: int = 2,
    size: tuple[int, int] = (120, 160),
    seed: int = 0,
) -> list[tuple[str, Scene, list[Camera], list[int]]]:
    """(scene id, scene, cameras by frame, frames paired with frame 0): pair k goes to scene
    k mod n_scenes; frame 0 of a scene is its reference view; `seed` draws the textures."""
    out = []
    for s in range(n_scenes):
        scene = Scene(
            seed=1000 + s + 7919 * seed, box=(0.4 - 0.05 * s, 0.3 + 0.05 * s, 0.5 + 0.1 * s)
        )
        K = intrinsics(size, focal=size[1] * (0.85 + 0.1 * s))
        offsets = [0.0] + [a for k, a in enumerate(angles) if k % n_scenes == s]
        cameras = [
            Camera(K, orbit_pose(30.0 + 17 * s + a, 35.0, 2.0, (0.0, 0.0, 0.2)), size)
            for a in offsets
        ]
        out.append((f"scene{s:04d}_00", scene, cameras, list(range(1, len(offsets)))))
    return out


def write_scannet(
    root: str | Path,
    angles: tuple[float, ...] = SCANNET_ANGLES,
    n_scenes: int = 2,
    size: tuple[int, int] = (120, 160),
    seed: int = 0,
) -> Path:
    """A synthetic `scannet-1500` release: color/<f>.jpg, depth/<f>.png (uint16 mm), pose/<f>.txt
    (camera-to-world), intrinsics.npz and test.npz (rows room, 0, 0, f) in pair order."""
    root = Path(root)
    rows, Ks = [], {}
    for room, (scene_id, scene, cameras, partners) in enumerate(
        scannet_scenes(angles, n_scenes, size, seed)
    ):
        Ks[scene_id] = cameras[0].K
        for frame, camera in enumerate(cameras):
            view = render(scene, camera)
            _save_image(root / scene_id / "color" / f"{frame}.jpg", view.rgb, quality=95)
            depth_mm = np.round(view.depth * 1000).astype(np.uint16)
            _save_image(root / scene_id / "depth" / f"{frame}.png", depth_mm)
            text = "\n".join(" ".join(f"{v:.9f}" for v in row) for row in camera.pose) + "\n"
            io.write_text(root / scene_id / "pose" / f"{frame}.txt", text)
        rows += [(room, 0, 0, frame) for frame in partners]
    order = sorted(rows, key=lambda r: (r[3], r[0]))  # interleave scenes, by pair index
    _npz(root / "intrinsics.npz", Ks)
    _npz(root / "test.npz", {"name": np.asarray(order, dtype=np.int64)})
    _marker(root, "scannet-1500", "synthetic textured box on a plane; not ScanNet")
    return root


SPAIR_CLASSES = {"widebox": (0.45, 0.3, 0.35), "tallbox": (0.2, 0.2, 0.7)}
SPAIR_AZIMUTHS = (0.0, 20.0, 45.0, 80.0)


def box_corners(scene: Scene) -> np.ndarray:
    """The box's 8 corners (8 x 3), in a fixed order: the keypoint ids."""
    x, y, h = scene.box
    return np.array([(sx * x, sy * y, z) for z in (0.0, h) for sy in (-1, 1) for sx in (-1, 1)])


def keypoints(scene: Scene, camera: Camera) -> list[list[float] | None]:
    """Projected corners (x, y pixels), None where hidden behind the box or outside the image."""
    origin = camera.pose[:3, 3]
    world_to_camera = np.linalg.inv(camera.pose)
    points: list[list[float] | None] = []
    for corner in box_corners(scene):
        in_camera = world_to_camera[:3, :3] @ corner + world_to_camera[:3, 3]
        direction = (corner - origin) / in_camera[2]  # camera z = 1, as rays() has it
        entry = box_entry(scene, origin, direction[None])[0]
        uv = camera.K @ in_camera
        x, y = uv[0] / uv[2], uv[1] / uv[2]
        inside = 0 <= x < camera.size[1] and 0 <= y < camera.size[0]
        # The corner is on the box: a ray entering earlier is blocked; one entering at the
        # corner, or only grazing it (entry inf or just past it numerically), sees it.
        visible = entry >= in_camera[2] * (1 - 1e-6)
        points.append([round(x, 3), round(y, 3)] if inside and visible else None)
    return points


def bucket(angle: float) -> int:
    """Viewpoint variation bucket of a pair: 0 up to 30 degrees, 1 up to 60, 2 beyond."""
    return 0 if angle <= 30 else 1 if angle <= 60 else 2


def write_spair(
    root: str | Path,
    azimuths: tuple[float, ...] = SPAIR_AZIMUTHS,
    size: tuple[int, int] = (120, 160),
    split: str = "test",
    seed: int = 0,
) -> Path:
    """A synthetic `spair-71k` release: per class (a box shape) one image per azimuth, corners
    as keypoints, the box's pixels' bounding box, every pair of images of a class."""
    root = Path(root)
    number = 0
    for c, (category, box) in enumerate(sorted(SPAIR_CLASSES.items())):
        scene = Scene(seed=2000 + c + 7919 * seed, box=box)
        K = intrinsics(size, focal=size[1] * 0.9)
        names, annotations = [], []
        for k, azimuth in enumerate(azimuths):
            camera = Camera(K, orbit_pose(10.0 + azimuth, 30.0, 1.8, (0.0, 0.0, box[2] / 2)), size)
            view = render(scene, camera)
            name = f"{c:04d}_{k:06d}"
            ys, xs = np.nonzero(view.surface == BOX)
            annotation = {
                "filename": f"{name}.jpg",
                "category": category,
                "image_width": size[1],
                "image_height": size[0],
                "image_depth": 3,
                "bndbox": [int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())],
                "kps": {str(i): p for i, p in enumerate(keypoints(scene, camera))},
                "azimuth_deg": azimuth,
            }
            _save_image(root / "JPEGImages" / category / f"{name}.jpg", view.rgb, quality=95)
            io.write_json(root / "ImageAnnotation" / category / f"{name}.json", annotation)
            names.append(name)
            annotations.append(annotation)
        for i in range(len(names)):
            for j in range(i + 1, len(names)):
                number += 1
                filename = f"{number:06d}-{names[i]}-{names[j]}:{category}"
                angle = abs(azimuths[j] - azimuths[i])
                pair = {
                    "filename": filename,
                    "category": category,
                    "src_imname": f"{names[i]}.jpg",
                    "trg_imname": f"{names[j]}.jpg",
                    "src_imsize": [size[1], size[0], 3],
                    "trg_imsize": [size[1], size[0], 3],
                    "src_bndbox": annotations[i]["bndbox"],
                    "trg_bndbox": annotations[j]["bndbox"],
                    "viewpoint_variation": bucket(angle),
                    "azimuth_difference_deg": angle,
                }
                io.write_json(root / "PairAnnotation" / split / f"{filename}.json", pair)
    _marker(root, "spair-71k", "synthetic textured boxes on a plane; not SPair-71k")
    return root
