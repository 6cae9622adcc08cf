"""Camera geometry of the correspondence protocols: pixel grids, back-projection, projection,
rigid transforms and rotation angles, as Probe3D computes them (evals/utils/correspondence.py and
evals/utils/transformations.py of github.com/mbanani/probe3d).

Conventions: the camera frame is +x right, +y down, +z into the scene; pixel (row i, column j)
has its centre at (j + 0.5, i + 0.5); a relative pose Rt_01 (3x4 or 4x4) maps points of camera 0
into camera 1 as `points @ R.T + t`.
"""

from __future__ import annotations

import math

import torch

from vlstress.errors import VlstressError


def pixel_grid(height: int, width: int) -> torch.Tensor:
    """(3, H, W) homogeneous pixel centres (u, v, 1): u = column + 0.5, v = row + 0.5."""
    us = torch.linspace(0.5, width - 0.5, width).view(1, width).repeat(height, 1)
    vs = torch.linspace(0.5, height - 0.5, height).view(height, 1).repeat(1, width)
    return torch.stack((us, vs, torch.ones_like(us)), dim=0)


def backproject_depth(depth: torch.Tensor, K: torch.Tensor) -> torch.Tensor:
    """(H*W, 3) camera-frame points of every pixel of a depth map ((H, W) or (1, H, W)), in
    row-major pixel order; a pixel without depth (0) gives the origin, so callers keep z > 0."""
    height, width = depth.shape[-2:]
    uvd = depth.reshape(1, height, width) * pixel_grid(height, width).to(depth)
    return (torch.linalg.inv(K).to(depth) @ uvd.view(3, height * width)).permute(1, 0)


def project(points: torch.Tensor, K: torch.Tensor) -> torch.Tensor:
    """(N, 2) pixel coordinates of camera-frame points (N, 3); depths are clamped at 1e-9 as
    Probe3D's project_3dto2d does, so a point at or behind the camera stays finite."""
    uvd = points @ K.transpose(-1, -2)
    return uvd[:, :2] / uvd[:, 2:3].clamp(min=1e-9)


def transform_points(points: torch.Tensor, Rt: torch.Tensor) -> torch.Tensor:
    """Points (N, 3) moved by a rigid transform Rt (3x4 or 4x4): points @ R.T + t."""
    rotation = Rt[..., :3, :3]
    translation = Rt[..., None, :3, 3]
    return points @ rotation.transpose(-2, -1) + translation


def rotation_angle_deg(rotations: torch.Tensor, eps: float = 1e-4) -> torch.Tensor:
    """Rotation angle in degrees of each rotation matrix ((3, 3) or (N, 3, 3)): acos((tr - 1)/2)
    with the cosine clamped to [-1, 1] (Probe3D's so3_rotation_angle). A trace outside
    [-1 - eps, 3 + eps] is no rotation and raises."""
    batch = rotations.reshape(-1, 3, 3) if rotations.shape[-2:] == (3, 3) else None
    if batch is None:
        raise VlstressError(f"rotation matrices of shape {tuple(rotations.shape)}: expected 3x3")
    trace = batch[:, 0, 0] + batch[:, 1, 1] + batch[:, 2, 2]
    if ((trace < -1.0 - eps) | (trace > 3.0 + eps)).any():
        raise VlstressError(
            f"a rotation matrix has trace {trace.min().item():.4f}..{trace.max().item():.4f}, "
            f"outside [-1, 3]: the pose is not a rotation"
        )
    radians = torch.acos(((trace - 1.0) * 0.5).clamp(min=-1, max=1))
    return (radians * 180.0 / math.pi).reshape(rotations.shape[:-2])
