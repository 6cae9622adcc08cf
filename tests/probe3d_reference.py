"""Probe3D's evaluation, transcribed for the agreement tests only (not in the vlstress package).

Licences: Probe3D is MIT (below); the functions from evals/utils/correspondence.py carry that
file's own header, CC BY-NC 4.0 (Meta Platforms, Inc. and affiliates), quoted further down.

MIT License

Copyright (c) 2024 Mohamed El Banani

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.

Transcribed from github.com/mbanani/probe3d at a1f14640076e38b8bc07b66d0fe2d01d15691e9d:
evals/utils/correspondence.py (whose own header reads "Copyright (c) Meta Platforms, Inc. and
affiliates. Original code is licensed under CC BY-NC 4.0. Code adapted by Mohamed El Banani"),
evals/utils/transformations.py, and the per-pair bodies of the evaluation loops of
evaluate_scannet_correspondence.py, evaluate_navi_correspondence.py and
evaluate_spair_correspondence.py (compute_errors). Changes: faiss's GPU kNN (faiss_knn) is an
exact brute-force search in torch; einops.einsum is torch.einsum with the same subscripts; the
functions the evaluations do not call (error_auc, so3_relative_angle) and some docstrings are
left out; the loop bodies are wrapped as functions of one pair (the
model call replaced by the given features, the `cfg` values by arguments); `.cuda()` is
`.to(DEVICE)` with DEVICE the CPU. Nothing else is changed. It is the reference that
tests/test_correspondence_metrics.py compares vlstress.suites.correspondence with.
"""

import numpy as np
import torch
import torch.nn.functional as nn_F
from torch.nn.functional import cosine_similarity

DEVICE = "cpu"


# ---- evals/utils/transformations.py ----


def transform_points_Rt(points: torch.Tensor, viewpoint: torch.Tensor, inverse: bool = False):
    R = viewpoint[..., :3, :3]
    t = viewpoint[..., None, :3, 3]
    # N.B. points is (..., n, 3) not (..., 3, n)
    if inverse:
        return (points - t) @ R
    else:
        return points @ R.transpose(-2, -1) + t


def so3_rotation_angle(R: torch.Tensor, eps: float = 1e-4) -> torch.Tensor:
    """
    Based on pytorch3d version
    """

    N, dim1, dim2 = R.shape
    if dim1 != 3 or dim2 != 3:
        raise ValueError("Input has to be a batch of 3x3 Tensors.")

    rot_trace = R[:, 0, 0] + R[:, 1, 1] + R[:, 2, 2]

    if ((rot_trace < -1.0 - eps) + (rot_trace > 3.0 + eps)).any():
        raise ValueError("A matrix has trace outside valid range [-1-eps,3+eps].")

    # phi ... rotation angle
    phi_cos = (rot_trace - 1.0) * 0.5
    return torch.acos(phi_cos.clamp(min=-1, max=1))


# ---- evals/utils/correspondence.py ----


def faiss_knn(query, target, k):
    # exact search in place of faiss.GpuIndexFlatL2 (squared L2 distances, nearest first)
    query = query.contiguous()
    target = target.contiguous()
    dist = torch.cdist(query.double(), target.double()) ** 2
    dist, index = torch.topk(dist, k, dim=-1, largest=False, sorted=True)
    return dist.float(), index


def knn_points(X_f, Y_f, K=1, metric="euclidean"):
    assert metric in ["cosine", "euclidean"]
    if metric == "cosine":
        X_f = torch.nn.functional.normalize(X_f, dim=-1)
        Y_f = torch.nn.functional.normalize(Y_f, dim=-1)

    _, X_nn = faiss_knn(X_f, Y_f, K)

    # n_points x k x F
    X_f_nn = Y_f[X_nn]

    if metric == "euclidean":
        dists = (X_f_nn - X_f[:, None, :]).norm(p=2, dim=3)
    elif metric == "cosine":
        dists = 1 - cosine_similarity(X_f_nn, X_f[:, None, :], dim=-1)

    return dists, X_nn


def get_correspondences_ratio_test(
    P1_F, P2_F, num_corres, metric="cosine", bidirectional=False, ratio_test=True
):
    # Calculate kNN for k=2; both outputs are (N, P, K)
    # idx_1 returns the indices of the nearest neighbor in P2
    # output is cosine distance (0, 2)
    K = 2

    dists_1, idx_1 = knn_points(P1_F, P2_F, K, metric)
    idx_1 = idx_1[..., 0]
    if ratio_test:
        weights_1 = calculate_ratio_test(dists_1)
    else:
        weights_1 = dists_1[:, 0]

    # Take the nearest neighbor for the indices for k={1, 2}
    if bidirectional:
        dists_2, idx_2 = knn_points(P2_F, P1_F, K, metric)
        idx_2 = idx_2[..., 0]
        if ratio_test:
            weights_2 = calculate_ratio_test(dists_2)
        else:
            weights_2 = dists_2[:, 0]

        # Get topK matches in both directions
        m12_idx1, m12_idx2, m12_dist = get_topk_matches(weights_1, idx_1, num_corres // 2)
        m21_idx2, m21_idx1, m21_dist = get_topk_matches(weights_2, idx_2, num_corres // 2)

        # concatenate into correspondences and weights
        all_idx1 = torch.cat((m12_idx1, m21_idx1), dim=1)
        all_idx2 = torch.cat((m12_idx2, m21_idx2), dim=1)
        all_dist = torch.cat((m12_dist, m21_dist), dim=1)
    else:
        all_idx1, all_idx2, all_dist = get_topk_matches(weights_1, idx_1, num_corres)

    return all_idx1, all_idx2, all_dist


@torch.jit.script
def calculate_ratio_test(dists: torch.Tensor):
    # clamping because some dists will be 0 (when not in the pointcloud
    dists = dists.clamp(min=1e-9)
    ratio = dists[..., 0] / dists[..., 1].clamp(min=1e-9)
    weight = 1 - ratio
    return weight


def get_topk_matches(dists, idx, num_corres: int):
    num_corres = min(num_corres, dists.shape[-1])
    dist, idx_source = torch.topk(dists, k=num_corres, dim=-1)
    idx_target = idx[idx_source]
    return idx_source, idx_target, dist


def get_grid(H: int, W: int):
    # Generate a grid that's equally spaced based on image & embed size
    grid_x = torch.linspace(0.5, W - 0.5, W)
    grid_y = torch.linspace(0.5, H - 0.5, H)

    xs = grid_x.view(1, W).repeat(H, 1)
    ys = grid_y.view(H, 1).repeat(1, W)
    zs = torch.ones_like(xs)

    # Camera coordinate frame is +xyz (right, down, into-camera)
    # Dims: 3 x H x W
    grid_xyz = torch.stack((xs, ys, zs), dim=0)
    return grid_xyz


def grid_to_pointcloud(K_inv, depth, grid=None):
    _, H, W = depth.shape

    if grid is None:
        grid = get_grid(H, W)

    # Apply inverse projection
    points = depth * grid

    # Invert intriniscs
    points = points.view(3, H * W)
    points = K_inv @ points
    points = points.permute(1, 0)

    return points


def sample_pointcloud_features(feats, K, pc, image_shape):
    H, W = image_shape
    uvd = pc @ K.transpose(-1, -2)
    uv = uvd[:, :2] / uvd[:, 2:3].clamp(min=1e-9)

    uv[:, 0] = (2 * uv[:, 0] / W) - 1
    uv[:, 1] = (2 * uv[:, 1] / H) - 1

    # sample points
    pc_F = nn_F.grid_sample(feats[None], uv[None, None], align_corners=False)
    pc_F = pc_F[:, :, 0].transpose(1, 2)[0]

    return pc_F


def argmax_2d(x, max_value=True):
    h, w = x.shape[-2:]
    x = torch.flatten(x, start_dim=-2)
    if max_value:
        flat_indices = x.argmax(dim=-1)
    else:
        flat_indices = x.argmin(dim=-1)

    min_row = flat_indices // w
    min_col = flat_indices % w
    xy_indices = torch.stack((min_col, min_row), dim=-1)
    return xy_indices


def project_3dto2d(xyz, K_mat):
    uvd = xyz @ K_mat.transpose(-1, -2)
    uv = uvd[:, :2] / uvd[:, 2:3].clamp(min=1e-9)
    return uv


def estimate_correspondence_depth(feat_0, feat_1, depth_0, depth_1, K, num_corr=500):
    xyz_0 = grid_to_pointcloud(K.inverse(), depth_0)
    xyz_1 = grid_to_pointcloud(K.inverse(), depth_1)
    xyz_0 = xyz_0[xyz_0[:, 2] > 0]
    xyz_1 = xyz_1[xyz_1[:, 2] > 0]

    feat_0 = sample_pointcloud_features(feat_0, K.clone(), xyz_0, depth_0.shape[-2:])
    feat_1 = sample_pointcloud_features(feat_1, K.clone(), xyz_1, depth_1.shape[-2:])

    idx0, idx1, corr_dist = get_correspondences_ratio_test(feat_0, feat_1, num_corr)

    corr_xyz0 = xyz_0[idx0]
    corr_xyz1 = xyz_1[idx1]

    return corr_xyz0, corr_xyz1, corr_dist


def estimate_correspondence_xyz(
    feat_0, feat_1, xyz_grid_0, xyz_grid_1, num_corr=500, ratio_test=True
):
    # upsample feats
    _, h, w = xyz_grid_0.shape
    feat_0 = nn_F.interpolate(feat_0[None], size=(h, w), mode="bicubic")[0]
    feat_1 = nn_F.interpolate(feat_1[None], size=(h, w), mode="bicubic")[0]

    uvd_0 = get_grid(h, w).to(xyz_grid_0)
    uvd_1 = get_grid(h, w).to(xyz_grid_1)

    # only keep values with real points
    feat_0 = feat_0.permute(1, 2, 0)[xyz_grid_0[2] > 0]
    feat_1 = feat_1.permute(1, 2, 0)[xyz_grid_1[2] > 0]
    xyz_0 = xyz_grid_0.permute(1, 2, 0)[xyz_grid_0[2] > 0]
    xyz_1 = xyz_grid_1.permute(1, 2, 0)[xyz_grid_1[2] > 0]
    uvd_0 = uvd_0.permute(1, 2, 0)[xyz_grid_0[2] > 0]
    uvd_1 = uvd_1.permute(1, 2, 0)[xyz_grid_1[2] > 0]

    idx0, idx1, c_dist = get_correspondences_ratio_test(
        feat_0, feat_1, num_corr, ratio_test=ratio_test
    )

    c_xyz0 = xyz_0[idx0]
    c_xyz1 = xyz_1[idx1]
    c_uv0 = uvd_0[idx0][:, :2]
    c_uv1 = uvd_1[idx1][:, :2]

    return c_xyz0, c_xyz1, c_dist, c_uv0, c_uv1


def compute_binned_performance(y, x, x_bins):
    """
    Given two arrays: (x, y), compute the mean y value for specific x_bins
    """
    y_binned = []
    for i in range(len(x_bins) - 1):
        x_min = x_bins[i]
        x_max = x_bins[i + 1]
        x_mask = (x >= x_min) * (x < x_max)
        y_binned.append(y[x_mask].mean())

    return y_binned


# ---- evaluate_scannet_correspondence.py: the body of the loop over pairs ----


def scannet_pair_errors(feats, deps, K_mat, Rt_gt, num_corr, scale_factor):
    """feats: (2, C, h, w); deps: (2, 1, H, W); K_mat: 3x3; Rt_gt: 3x4."""
    # scale depth and intrinsics
    feats = feats.detach().cpu()
    deps = nn_F.interpolate(deps, scale_factor=scale_factor)
    K_mat[:2, :] *= scale_factor

    # compute corr
    corr_xyz0, corr_xyz1, corr_dist = estimate_correspondence_depth(
        feats[0], feats[1], deps[0], deps[1], K_mat.clone(), num_corr
    )

    # compute error
    corr_xyz0in1 = transform_points_Rt(corr_xyz0, Rt_gt)
    uv_0in1 = project_3dto2d(corr_xyz0in1, K_mat.clone())
    uv_1in1 = project_3dto2d(corr_xyz1, K_mat.clone())
    corr_err2d = (uv_0in1 - uv_1in1).norm(p=2, dim=1)
    return corr_err2d.detach().cpu()


# ---- evaluate_navi_correspondence.py: the bodies of the two loops, for one pair ----


def navi_pair_errors(
    feat_0, feat_1, xyz_grid_0, xyz_grid_1, Rt_gt, intrinsics, num_corr, scale_factor
):
    """feat_*: (C, h, w); xyz_grid_*: (3, H, W); Rt_gt: 3x4; intrinsics: view 1's 3x3."""
    # scale down to avoid a huge matching problem
    xyz_grid_0 = nn_F.interpolate(xyz_grid_0[None], scale_factor=scale_factor, mode="nearest")[0]
    xyz_grid_1 = nn_F.interpolate(xyz_grid_1[None], scale_factor=scale_factor, mode="nearest")[0]

    c_xyz0, c_xyz1, c_dist, c_uv0, c_uv1 = estimate_correspondence_xyz(
        feat_0, feat_1, xyz_grid_0, xyz_grid_1, num_corr
    )

    c_uv0 = c_uv0 / scale_factor
    c_uv1 = c_uv1 / scale_factor

    c_xyz0in1 = transform_points_Rt(c_xyz0, Rt_gt.float())
    c_err3d = (c_xyz0in1 - c_xyz1).norm(p=2, dim=1)

    c_xyz1in1_uv = project_3dto2d(c_xyz1, intrinsics)
    c_xyz0in1_uv = project_3dto2d(c_xyz0in1, intrinsics)
    c_err2d = (c_xyz0in1_uv - c_xyz1in1_uv).norm(p=2, dim=1)

    return c_err3d.detach().cpu(), c_err2d.detach().cpu()


# ---- evaluate_spair_correspondence.py: compute_errors ----


def compute_errors(model, instance, mask_feats=False, return_heatmaps=False):
    img_i, mask_i, kps_i, img_j, mask_j, kps_j, thresh_scale, _ = instance
    mask_i = torch.tensor(np.array(mask_i, dtype=float))
    mask_j = torch.tensor(np.array(mask_j, dtype=float))

    images = torch.stack((img_i, img_j)).to(DEVICE)
    masks = torch.stack((mask_i, mask_j)).to(DEVICE)
    masks = torch.nn.functional.avg_pool2d(masks.float(), 16)
    masks = masks > 4 / (16**2)

    feats = model(images)
    if isinstance(feats, list):
        feats = torch.cat(feats, dim=1)

    feats = nn_F.normalize(feats, p=2, dim=1)

    if mask_feats:
        feats = feats * masks

    feats_i = feats[0]
    feats_j = feats[1]

    # normalize kps to [0, 1]
    assert images.shape[-1] == images.shape[-2], "assuming square images here"
    kps_i = kps_i.float()
    kps_j = kps_j.float()
    kps_i[:, :2] = kps_i[:, :2] / images.shape[-1]
    kps_j[:, :2] = kps_j[:, :2] / images.shape[-1]

    # get correspondences
    kps_i_ndc = (kps_i[:, :2].float() * 2 - 1)[None, None].to(DEVICE)
    kp_i_F = nn_F.grid_sample(feats_i[None, :], kps_i_ndc, mode="bilinear", align_corners=True)
    kp_i_F = kp_i_F[0, :, 0].t()

    # get max index in [0,1] range
    heatmaps = torch.einsum("kf,fhw->khw", kp_i_F, feats_j)
    pred_kp = argmax_2d(heatmaps, max_value=True).float().cpu() / feats.shape[-1]

    # compute error and scale to threshold (for all pairs)
    errors = (pred_kp[:, None, :] - kps_j[None, :, :2]).norm(p=2, dim=-1)
    errors = errors / thresh_scale

    # only retain keypoints in both (for now)
    valid_kps = (kps_i[:, None, 2] * kps_j[None, :, 2]) == 1
    in_both = valid_kps.diagonal()

    # max error should be 1, so this excludes invalid from NN-search
    errors[valid_kps.logical_not()] = 1e3

    error_same = errors.diagonal()[in_both]
    error_nn, index_nn = errors[in_both].min(dim=1)
    index_same = in_both.nonzero().squeeze(1)

    if return_heatmaps:
        return error_same, error_nn, index_same, index_nn, heatmaps
    else:
        return error_same, error_nn, index_same, index_nn
