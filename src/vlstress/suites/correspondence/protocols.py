"""Per-pair correspondence errors of Probe3D's three protocols (evaluate_scannet_correspondence,
evaluate_navi_correspondence, evaluate_spair_correspondence of github.com/mbanani/probe3d).

Each function takes one pair's dense features ((C, h, w) maps of a frozen image tower) and its
geometry, and returns the errors that the scores (`scores.py`) threshold. Probe3D's defaults are
the keyword defaults. The geometry is moved to the features' device, so a model step may pass
its features where they are; the device changes the matches only at floating-point near-ties.
"""

from __future__ import annotations

import torch
from torch.nn import functional as F

from vlstress.suites.correspondence.geometry import (
    backproject_depth,
    project,
    transform_points,
)
from vlstress.suites.correspondence.matching import (
    CHUNK_ELEMENTS,
    ratio_test_matches,
    sample_features_at_points,
)

SCANNET_NUM_CORR = 1000
SCANNET_SCALE_FACTOR = 0.25
NAVI_NUM_CORR = 1000
NAVI_SCALE_FACTOR = 0.25


def scannet_errors(
    feat0: torch.Tensor,
    feat1: torch.Tensor,
    depth0: torch.Tensor,
    depth1: torch.Tensor,
    K: torch.Tensor,
    Rt01: torch.Tensor,
    num_corr: int = SCANNET_NUM_CORR,
    scale_factor: float = SCANNET_SCALE_FACTOR,
    chunk_elements: int = CHUNK_ELEMENTS,
) -> torch.Tensor:
    """2D errors (pixels of the scaled depth map) of the min(num_corr, N) ratio-test matches of
    a ScanNet pair.

    depth0/depth1: (H, W) or (1, H, W) metres, 0 where unknown; K: their 3x3 intrinsics; Rt01:
    camera 0 to camera 1. Depth (nearest) and K are scaled by `scale_factor`; features are sampled
    at the valid-depth points; a match's error is the distance in view 1 between the projection
    of its view-0 point moved by Rt01 and the projection of its view-1 point.
    """
    device = feat0.device
    scaled_K = K.clone().float().to(device)
    scaled_K[:2, :] *= scale_factor
    points = []
    features = []
    for feat, depth in ((feat0, depth0), (feat1, depth1)):
        depth = depth.reshape(1, 1, *depth.shape[-2:]).float().to(device)
        depth = F.interpolate(depth, scale_factor=scale_factor)[0]
        xyz = backproject_depth(depth, scaled_K)
        xyz = xyz[xyz[:, 2] > 0]
        points.append(xyz)
        image_shape = (depth.shape[-2], depth.shape[-1])
        features.append(sample_features_at_points(feat, scaled_K, xyz, image_shape))
    matches = ratio_test_matches(features[0], features[1], num_corr, chunk_elements)
    xyz0in1 = transform_points(points[0][matches.source], Rt01[:3, :4].float().to(device))
    uv_0in1 = project(xyz0in1, scaled_K)
    uv_1 = project(points[1][matches.target], scaled_K)
    return (uv_0in1 - uv_1).norm(p=2, dim=1)


def navi_errors(
    feat0: torch.Tensor,
    feat1: torch.Tensor,
    xyz_grid0: torch.Tensor,
    xyz_grid1: torch.Tensor,
    Rt01: torch.Tensor,
    K1: torch.Tensor,
    num_corr: int = NAVI_NUM_CORR,
    scale_factor: float = NAVI_SCALE_FACTOR,
    chunk_elements: int = CHUNK_ELEMENTS,
) -> tuple[torch.Tensor, torch.Tensor]:
    """(3D errors in metres, 2D errors in image pixels) of the min(num_corr, N) ratio-test
    matches of a NAVI pair (Probe3D's estimate_correspondence_xyz).

    xyz_grid0/xyz_grid1: (3, H, W) camera-frame points of each image pixel (z = 0 where there
    is no object), scaled here by `scale_factor` (nearest); features are upsampled (bicubic) to
    the scaled grid and matched among points with z > 0. The 3D error is the distance in
    camera 1 between the view-0 point moved by Rt01 and the view-1 point; the 2D error is the
    distance between their projections with K1, view 1's intrinsics at the image's resolution.
    (Probe3D also returns the matches' grid coordinates divided by the scale factor; no error
    depends on them.)
    """
    kept_points = []
    kept_features = []
    for feat, grid in ((feat0, xyz_grid0), (feat1, xyz_grid1)):
        grid = grid[None].float().to(feat.device)
        grid = F.interpolate(grid, scale_factor=scale_factor, mode="nearest")[0]
        _, height, width = grid.shape
        upsampled = F.interpolate(feat[None], size=(height, width), mode="bicubic")[0]
        valid = grid[2] > 0
        kept_features.append(upsampled.permute(1, 2, 0)[valid])
        kept_points.append(grid.permute(1, 2, 0)[valid])
    matches = ratio_test_matches(kept_features[0], kept_features[1], num_corr, chunk_elements)
    device = feat0.device
    xyz0in1 = transform_points(kept_points[0][matches.source], Rt01[:3, :4].float().to(device))
    xyz1 = kept_points[1][matches.target]
    K1 = K1.float().to(device)
    err3d = (xyz0in1 - xyz1).norm(p=2, dim=1)
    err2d = (project(xyz0in1, K1) - project(xyz1, K1)).norm(p=2, dim=1)
    return err3d, err2d


def spair_errors(
    feat_i: torch.Tensor,
    feat_j: torch.Tensor,
    kps_i: torch.Tensor,
    kps_j: torch.Tensor,
    thresh_scale: float,
    image_size: int,
) -> torch.Tensor:
    """Keypoint-transfer errors of a SPair-71k pair, for the keypoints visible in both images,
    in units of `thresh_scale` (max bbox side / max image side of the target), so PCK@0.10 is
    the share below 0.10 (Probe3D's compute_errors).

    kps_i/kps_j: (K, 3) x, y in pixels of the square image of side `image_size`, and 1 where
    the keypoint is visible. Features are L2-normalised over channels; a source keypoint's
    feature is read bilinearly (align_corners=True); its prediction is the argmax of the
    similarity over the target map, at column / w, row / w of the map (Probe3D's argmax_2d
    divided by the feature side, no half-cell offset).
    """
    feat_i = F.normalize(feat_i.float(), p=2, dim=0)
    feat_j = F.normalize(feat_j.float(), p=2, dim=0)
    kps_i = kps_i.float().to(feat_i.device)
    kps_j = kps_j.float().to(feat_i.device)
    xy_i = kps_i[:, :2] / image_size
    xy_j = kps_j[:, :2] / image_size
    grid = (xy_i * 2 - 1)[None, None]
    source = F.grid_sample(feat_i[None], grid, mode="bilinear", align_corners=True)[0, :, 0].T
    heatmaps = torch.einsum("kf,fhw->khw", source, feat_j)
    width = heatmaps.shape[-1]
    flat = heatmaps.flatten(start_dim=-2).argmax(dim=-1)
    predicted = torch.stack((flat % width, flat // width), dim=-1).float() / feat_j.shape[-1]
    in_both = (kps_i[:, 2] * kps_j[:, 2]) == 1
    errors = (predicted - xy_j).norm(p=2, dim=-1) / thresh_scale
    return errors[in_both]
