"""Ratio-test matching of dense features (Probe3D's get_correspondences_ratio_test, one way).

Each point of view 0 takes its two nearest neighbours among the points of view 1 in cosine
distance; its weight is 1 - d1 / d2 (near 1: a distinctive match, near 0: ambiguous), and the
`num_corr` heaviest matches are kept. Probe3D searches with faiss on a GPU; the search here is
exact, in torch, over chunks of query rows so that memory stays bounded (20k x 20k points need
about `chunk_elements` floats at a time, not 400M).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.nn import functional as F

from vlstress.errors import VlstressError

# Floats of one chunk of the query x target similarity matrix (64 MiB in float32).
CHUNK_ELEMENTS = 1 << 24


@dataclass(frozen=True)
class Matches:
    """The kept matches, heaviest first: indices into the points of view 0 and view 1, and the
    ratio-test weights."""

    source: torch.Tensor
    target: torch.Tensor
    weight: torch.Tensor


def sample_features_at_points(
    features: torch.Tensor, K: torch.Tensor, points: torch.Tensor, image_shape: tuple[int, int]
) -> torch.Tensor:
    """(N, C) features of a (C, h, w) map at the projections of camera-frame points (N, 3) into
    an image of `image_shape` (H, W) with intrinsics K: bilinear grid_sample, align_corners=False
    (Probe3D's sample_pointcloud_features), so the map may be coarser than the image."""
    height, width = image_shape
    uvd = points @ K.transpose(-1, -2)
    uv = uvd[:, :2] / uvd[:, 2:3].clamp(min=1e-9)
    normalised = torch.stack((2 * uv[:, 0] / width - 1, 2 * uv[:, 1] / height - 1), dim=-1)
    sampled = F.grid_sample(features[None], normalised[None, None], align_corners=False)
    return sampled[0, :, 0].transpose(0, 1)


def knn2_cosine(
    query: torch.Tensor, target: torch.Tensor, chunk_elements: int = CHUNK_ELEMENTS
) -> tuple[torch.Tensor, torch.Tensor]:
    """The two nearest target rows of each query row in cosine distance: (distances (N, 2),
    indices (N, 2)), nearest first. Exact search over chunks of query rows. Among equal
    similarities the lower target index wins (torch.argmax returns the first maximum), so the
    result is deterministic. The distances are recomputed from the chosen rows as Probe3D does
    (1 - cosine_similarity), not read off the chunked products."""
    if target.shape[0] < 2:
        raise VlstressError(
            f"the ratio test needs at least 2 points in view 1, got {target.shape[0]}"
        )
    query_unit = F.normalize(query, dim=-1)
    target_unit = F.normalize(target, dim=-1)
    rows = max(1, chunk_elements // target.shape[0])
    indices = []
    for start in range(0, query.shape[0], rows):
        similarity = query_unit[start : start + rows] @ target_unit.T
        first = similarity.argmax(dim=1)
        similarity.scatter_(1, first[:, None], float("-inf"))
        second = similarity.argmax(dim=1)
        indices.append(torch.stack((first, second), dim=1))
    nearest = torch.cat(indices) if indices else query.new_zeros((0, 2), dtype=torch.long)
    distances = 1 - F.cosine_similarity(target_unit[nearest], query_unit[:, None, :], dim=-1)
    return distances, nearest


def ratio_test_weights(distances: torch.Tensor) -> torch.Tensor:
    """1 - d1 / d2 of (N, 2) nearest-neighbour distances; both clamped at 1e-9 (a distance of 0,
    e.g. identical features, would divide by zero)."""
    distances = distances.clamp(min=1e-9)
    return 1 - distances[..., 0] / distances[..., 1].clamp(min=1e-9)


def top_matches(weights: torch.Tensor, nearest: torch.Tensor, num_corr: int) -> Matches:
    """The min(num_corr, N) heaviest matches. Equal weights do occur: a feature map coarser
    than the points is sampled with zero padding, so points within half a cell of its border
    read a border cell's feature scaled down, the same direction, hence the same neighbours and
    weight (and near 0, float32 rounds many weights to one value). torch.topk's order among
    equal weights (Probe3D's) is unspecified, and at the cut it decides which of them are
    kept; a stable descending sort keeps equal weights in ascending source index instead, the
    same on every machine."""
    order = torch.sort(weights, descending=True, stable=True).indices[: min(num_corr, len(weights))]
    return Matches(source=order, target=nearest[order], weight=weights[order])


def ratio_test_matches(
    features_0: torch.Tensor,
    features_1: torch.Tensor,
    num_corr: int,
    chunk_elements: int = CHUNK_ELEMENTS,
) -> Matches:
    """Matches from the points of view 0 (N0, C) to those of view 1 (N1, C) by the ratio test."""
    distances, nearest = knn2_cosine(features_0, features_1, chunk_elements)
    return top_matches(ratio_test_weights(distances), nearest[:, 0], num_corr)
