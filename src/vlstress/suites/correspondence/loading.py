"""One pair's arrays as each protocol needs them (Probe3D's datasets' __getitem__), as torch
float32 tensors. A missing or unreadable image or depth file is a VlstressError naming it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from PIL import Image, ImageOps, UnidentifiedImageError

from vlstress.errors import VlstressError
from vlstress.suites.correspondence.pairs import KeypointPair, ViewPair, both

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
HALF = (0.5, 0.5, 0.5)


@dataclass(frozen=True)
class DepthPair:
    """ScanNet protocol: images (3 x H x W, resized), depths in metres (1 x h x w, as stored),
    the depths' K and Rt_01 (4x4)."""

    images: tuple[torch.Tensor, torch.Tensor]
    depths: tuple[torch.Tensor, torch.Tensor]
    K: torch.Tensor
    Rt_01: torch.Tensor


@dataclass(frozen=True)
class XyzView:
    """NAVI protocol, one view: the cropped square image, its depth (metres), each pixel's
    camera-frame point (3 x S x S, zero where there is no depth) and the crop's K (Probe3D's:
    the focal length only)."""

    image: torch.Tensor
    depth: torch.Tensor
    xyz: torch.Tensor
    K: torch.Tensor


@dataclass(frozen=True)
class XyzPair:
    views: tuple[XyzView, XyzView]
    Rt_01: torch.Tensor


@dataclass(frozen=True)
class KeypointImages:
    """SPair protocol: square images (3 x S x S), keypoints (n x 2, pixels of the resized
    image, truncated to integers as Probe3D's int tensors do), which are annotated (n, bool),
    and the PCK threshold scale."""

    images: tuple[torch.Tensor, torch.Tensor]
    keypoints: tuple[torch.Tensor, torch.Tensor]
    visible: tuple[torch.Tensor, torch.Tensor]
    threshold_scale: float

    def kps(self, view: int) -> torch.Tensor:
        """(n, 3): x, y and 1 where annotated, 0 elsewhere (Probe3D's keypoint tensor)."""
        return torch.cat([self.keypoints[view], self.visible[view][:, None].float()], dim=1)


def open_image(path: Path, exif_transpose: bool = False) -> Image.Image:
    try:
        with Image.open(path) as opened:
            image = ImageOps.exif_transpose(opened) if exif_transpose else opened
            return image.convert("RGB")
    except FileNotFoundError:
        raise VlstressError(f"image not found: {path}") from None
    except (UnidentifiedImageError, OSError, SyntaxError) as exc:
        raise VlstressError(f"image {path} cannot be read ({exc})") from None


def read_depth_m(path: Path, decoding: str, navi_scale: float = 10.0) -> np.ndarray:
    """A depth file in metres (float32, H x W; 0 where there is none).

    "scannet-mm": uint16 millimetres / 1000. "navi-disparity": Probe3D's read_depth, whose
    disparity is uint16 / (65535 * navi_scale) and depth 1 / disparity in millimetres, / 1000.
    """
    try:
        with Image.open(path) as image:
            raw = np.array(image)
    except FileNotFoundError:
        raise VlstressError(f"depth not found: {path}") from None
    except (UnidentifiedImageError, OSError, SyntaxError) as exc:
        raise VlstressError(f"depth {path} cannot be read ({exc})") from None
    if raw.ndim != 2:
        raise VlstressError(f"depth {path} is not a single-channel image (shape {raw.shape})")
    if decoding == "scannet-mm":
        return raw.astype(np.float32) / 1000.0
    if decoding == "navi-disparity":
        disparity = raw.astype("uint16").astype(np.float32) / (65535 * navi_scale)
        disparity[disparity == 0] = np.inf
        return (1 / disparity) / 1000
    raise VlstressError(f"unknown depth decoding {decoding!r} (scannet-mm or navi-disparity)")


def _normalise(image: torch.Tensor, mean: tuple[float, ...], std: tuple[float, ...]):
    from torchvision.transforms import functional as TF

    return TF.normalize(image, mean=list(mean), std=list(std))


def scannet_pair(
    pair: ViewPair,
    root: Path,
    size: tuple[int, int] = (480, 640),
    mean: tuple[float, ...] = HALF,
    std: tuple[float, ...] = HALF,
) -> DepthPair:
    """Probe3D's ScanNetPairsDataset: RGB resized to `size` (H, W; torchvision Resize on the PIL
    image, bilinear, antialiased), normalised; depth in metres at its stored size."""
    from torchvision.transforms import functional as TF

    images = [
        _normalise(TF.to_tensor(TF.resize(open_image(root / p), list(size))), mean, std)
        for p in pair.images
    ]
    depths = [
        torch.from_numpy(read_depth_m(root / p, pair.depth_decoding))[None] for p in pair.depths
    ]
    return DepthPair(
        images=(images[0], images[1]),
        depths=(depths[0], depths[1]),
        K=torch.tensor(pair.intrinsics[0], dtype=torch.float32),
        Rt_01=torch.tensor(pair.Rt_01, dtype=torch.float64).float(),
    )


def grid(height: int, width: int) -> torch.Tensor:
    """Pixel centres (u + 0.5, v + 0.5, 1), 3 x H x W (Probe3D's get_grid)."""
    xs = torch.linspace(0.5, width - 0.5, width).view(1, width).repeat(height, 1)
    ys = torch.linspace(0.5, height - 0.5, height).view(height, 1).repeat(1, width)
    return torch.stack((xs, ys, torch.ones_like(xs)), dim=0)


def navi_pair(
    pair: ViewPair,
    root: Path,
    size: int = 512,
    mean: tuple[float, ...] = IMAGENET_MEAN,
    std: tuple[float, ...] = IMAGENET_STD,
) -> XyzPair:
    views = [
        navi_view(root / pair.images[v], root / pair.depths[v], pair.intrinsics[v], size, mean, std)
        for v in (0, 1)
    ]
    return XyzPair((views[0], views[1]), torch.tensor(pair.Rt_01, dtype=torch.float64).float())


def navi_view(
    image_path: Path,
    depth_path: Path,
    K: tuple[tuple[float, ...], ...],
    size: int = 512,
    mean: tuple[float, ...] = IMAGENET_MEAN,
    std: tuple[float, ...] = IMAGENET_STD,
) -> XyzView:
    """Probe3D's NAVI get_single (test split, no augmentation): exif-transposed image and decoded
    depth, each resized (nearest) to `size` on the short side and centre-cropped square; the xyz
    grid from the focal length scaled to that size; a square crop around the object's depth
    (bbox_crop), resized (nearest) back to `size`; depth below the view's least depth zeroed."""
    from torchvision.transforms import functional as TF

    nearest = TF.InterpolationMode.NEAREST
    image = _normalise(TF.to_tensor(open_image(image_path, exif_transpose=True)), mean, std)
    image = TF.center_crop(TF.resize(image, [size], interpolation=nearest), [size])
    depth_np = read_depth_m(depth_path, "navi-disparity")
    if not (depth_np > 0).any():
        raise VlstressError(f"depth {depth_path} has no valid pixel")
    min_depth = float(depth_np[depth_np > 0].min())
    depth = TF.center_crop(TF.resize(TF.to_tensor(depth_np), [size], interpolation=nearest), [size])
    if not (depth > 0).any():
        raise VlstressError(f"depth {depth_path} has no valid pixel in the centre square")
    # K's centre is the annotated image's (its size / 2), as navi.py assumes.
    orig_h, orig_w = 2 * K[1][2], 2 * K[0][2]
    image_h, image_w = image.shape[1:]
    fx = K[0][0] * min(image_h, image_w) / min(orig_h, orig_w)
    centred = torch.eye(3)
    centred[0, 0] = centred[1, 1] = fx
    centred[0, 2], centred[1, 2] = 0.5 * image_h, 0.5 * image_w  # navi.py's order (square here)
    xyz = (centred.inverse() @ (depth * grid(image_h, image_w)).view(3, -1)).view(
        3, image_h, image_w
    )
    image, depth, xyz = bbox_crop(image, depth, xyz)
    crop_h, crop_w = image.shape[1:]
    image, depth, xyz = (resize_nearest_cv2(t, size) for t in (image, depth, xyz))
    depth[depth < min_depth] = 0
    final_K = torch.eye(3)
    final_K[:2] = fx * size / min(crop_h, crop_w) * final_K[:2]
    return XyzView(image=image, depth=depth, xyz=xyz, K=final_K)


def resize_nearest_cv2(tensor: torch.Tensor, size: int) -> torch.Tensor:
    """C x H x W resized to size x size as OpenCV's INTER_NEAREST (what Probe3D's albumentations
    Resize(interpolation=0) runs): source index floor(i * (1 / (size / H))) in doubles, which
    differs from torch's nearest where i * H / size is a whole number."""
    rows, cols = (
        torch.from_numpy(
            np.minimum(np.floor(np.arange(size) * (1.0 / (size / n))).astype(np.int64), n - 1)
        )
        for n in tensor.shape[1:]
    )
    return tensor[:, rows][:, :, cols]


def bbox_crop(image: torch.Tensor, depth: torch.Tensor, xyz: torch.Tensor):
    """Probe3D's bbox_crop: a square around the pixels with depth, centred where it fits, else
    pushed from the top-left (its exact arithmetic, the box side being max - min)."""
    coords = (depth > 0).nonzero()
    top_left = coords.min(dim=0).values[1:]
    box = coords.max(dim=0).values[1:] - top_left
    side = box.max()
    image_size = torch.tensor(depth.shape[1:])
    if side > image_size.min():
        raise VlstressError("the object's box is larger than the image's short side")
    start = top_left - (side - box) // 2
    if not ((start >= 0).all() and (start + side <= image_size).all()):
        start = (top_left - (side - box)).clip(min=0)
    y0, x0 = int(start[0]), int(start[1])
    y1, x1 = y0 + int(side), x0 + int(side)
    return image[:, y0:y1, x0:x1], depth[:, y0:y1, x0:x1], xyz[:, y0:y1, x0:x1]


def spair_pair(
    pair: KeypointPair,
    root: Path,
    size: int = 800,
    mean: tuple[float, ...] = IMAGENET_MEAN,
    std: tuple[float, ...] = IMAGENET_STD,
    fill: int = 255,
) -> KeypointImages:
    """Probe3D's SPairDataset (use_bbox False): each image padded square at the bottom/right
    with `fill`, resized to `size` (bicubic, antialiased), normalised; keypoints scaled by
    size / padded side."""
    from torchvision.transforms import functional as TF

    images, keypoints, visible = [], [], []
    for v in (0, 1):
        square = _pad_square(np.array(open_image(root / pair.images[v])), fill)
        side = square.shape[0]
        resized = TF.resize(
            Image.fromarray(square),
            [size, size],
            interpolation=TF.InterpolationMode.BICUBIC,
            antialias=True,
        )
        images.append(_normalise(TF.to_tensor(resized), mean, std))
        points = pair.keypoints[v]
        xy = torch.tensor([p if p is not None else (0, 0) for p in points]).reshape(-1, 2).int()
        # Probe3D scales int keypoints in place: x * size / side, truncated back to int.
        xy = (xy * size / side).int()
        keypoints.append(xy.float())
        visible.append(torch.tensor([p is not None for p in points], dtype=torch.bool))
    return KeypointImages(both(images), both(keypoints), both(visible), pair.threshold_scale)


def _pad_square(image: np.ndarray, fill: int) -> np.ndarray:
    h, w = image.shape[:2]
    side = max(h, w)
    return np.pad(image, ((0, side - h), (0, side - w), (0, 0)), constant_values=fill)
