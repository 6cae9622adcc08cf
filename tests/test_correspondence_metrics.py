"""The correspondence matching and metrics (vlstress.suites.correspondence): agreement with a
transcription of Probe3D's code (tests/probe3d_reference.py) on random features and synthetic
scenes, and known answers (features that encode the 3D point, random features at chance level,
known rotations, hand-made recalls and keypoints)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import probe3d_reference as ref
import pytest
import torch

from vlstress.errors import VlstressError
from vlstress.suites.correspondence import geometry, matching, protocols, scores

# A small ScanNet-like camera: 96 x 128 depth maps, matched at scale 0.5 (48 x 64 points).
HEIGHT, WIDTH = 96, 128
K = np.array([[100.0, 0.0, 64.0], [0.0, 100.0, 48.0], [0.0, 0.0, 1.0]])
SCALE = 0.5


def rotation(axis: np.ndarray, degrees: float) -> np.ndarray:
    """Rodrigues' rotation about `axis` by `degrees`."""
    axis = np.asarray(axis, dtype=np.float64) / np.linalg.norm(axis)
    skew = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    angle = math.radians(degrees)
    return np.eye(3) + math.sin(angle) * skew + (1 - math.cos(angle)) * skew @ skew


def pose(axis: tuple[float, float, float], degrees: float, t: tuple[float, ...]) -> np.ndarray:
    """A 3x4 camera 0 -> camera 1 transform."""
    return np.concatenate([rotation(np.array(axis), degrees), np.array(t)[:, None]], axis=1)


def plane_depth(normal: np.ndarray, offset: float, Rt: np.ndarray, K_: np.ndarray, shape):
    """Depth map, in camera 1 = Rt (camera 0), of the plane normal . X = offset of camera 0."""
    rot, t = Rt[:, :3], Rt[:, 3]
    normal_1 = rot @ normal  # the plane in camera 1: normal_1 . X = offset + normal_1 . t
    offset_1 = offset + normal_1 @ t
    rows, cols = np.mgrid[0 : shape[0], 0 : shape[1]]
    rays = np.stack([cols + 0.5, rows + 0.5, np.ones(shape)], axis=-1) @ np.linalg.inv(K_).T
    return offset_1 / (rays @ normal_1)


def scene(Rt: np.ndarray, holes: float, seed: int):
    """Depth maps of both views of a tilted plane about 2.5 m away; a share `holes` of each
    view's pixels has no depth (0)."""
    normal = np.array([0.1, -0.15, 1.0])
    rng = np.random.default_rng(seed)
    depths = []
    for view_Rt in (np.concatenate([np.eye(3), np.zeros((3, 1))], axis=1), Rt):
        depth = plane_depth(normal, 2.5, view_Rt, K, (HEIGHT, WIDTH))
        depth[rng.random(depth.shape) < holes] = 0.0
        depths.append(depth)
    return depths


def backproject(depth: np.ndarray, K_: np.ndarray) -> np.ndarray:
    """(H, W, 3) camera points of every pixel centre (written out, not the module's)."""
    rows, cols = np.mgrid[0 : depth.shape[0], 0 : depth.shape[1]]
    x = (cols + 0.5 - K_[0, 2]) / K_[0, 0] * depth
    y = (rows + 0.5 - K_[1, 2]) / K_[1, 1] * depth
    return np.stack([x, y, depth], axis=-1)


def scaled_points(depth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The protocol's points at scale 0.5 (nearest: every other pixel), as an (h, w, 3) grid,
    and the scaled intrinsics."""
    K_s = K.copy()
    K_s[:2] *= SCALE
    return backproject(depth[::2, ::2], K_s), K_s


def fourier(points: np.ndarray, dims: int = 256, bandwidth: float = 25.0) -> np.ndarray:
    """Fixed random Fourier features of 3D points (..., 3) -> (..., 2 * dims): their cosine
    similarity is about exp(-(bandwidth * distance)^2 / 2), so the nearest feature is the
    nearest point."""
    freqs = np.random.default_rng(123).normal(0.0, bandwidth, size=(3, dims))
    phase = points @ freqs
    return np.concatenate([np.cos(phase), np.sin(phase)], axis=-1) / math.sqrt(dims)


def to_world(points_1: np.ndarray, Rt: np.ndarray) -> np.ndarray:
    """Camera-1 points back into camera 0 (the world frame of the tests)."""
    return (points_1 - Rt[:, 3]) @ Rt[:, :3]


def tensor(array: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(array)).float()


RT = pose((0.2, 1.0, 0.1), 8.0, (0.25, -0.05, 0.1))


# ---- agreement with the transcription of Probe3D ----


def assert_equal_up_to_ties(ours: torch.Tensor, expected: torch.Tensor, weights: torch.Tensor):
    """Errors equal the reference's, in the order of the reference's weights (heaviest first);
    within a run of equal weights torch.topk's order is unspecified, so those are compared as
    sets, and a run cut off at the end (topk may keep other members of it) is left out."""
    runs = torch.unique_consecutive(weights, return_counts=True)[1].tolist()
    start = 0
    for position, length in enumerate(runs):
        stop = start + length
        if length > 1 and position == len(runs) - 1:
            break
        torch.testing.assert_close(
            ours[start:stop].sort().values, expected[start:stop].sort().values, rtol=1e-5, atol=1e-5
        )
        start = stop
    assert start >= 0.9 * len(expected)


@pytest.mark.parametrize("seed", [0, 1])
def test_scannet_errors_equal_probe3ds(seed):
    depth0, depth1 = scene(RT, holes=0.2, seed=seed)
    generator = torch.Generator().manual_seed(seed)
    # a patch grid coarser than the points: points within half a cell of the border read the
    # zero padding, so pairs of them differ only in scale and tie (same neighbours, same weight)
    feats = torch.randn((2, 24, 12, 16), generator=generator)
    deps = torch.stack([tensor(depth0)[None], tensor(depth1)[None]])
    expected = ref.scannet_pair_errors(
        feats.clone(), deps, tensor(K), tensor(RT), num_corr=300, scale_factor=SCALE
    )
    scaled_K = tensor(K)
    scaled_K[:2] *= SCALE
    scaled = torch.nn.functional.interpolate(deps, scale_factor=SCALE)
    weights = ref.estimate_correspondence_depth(
        feats[0], feats[1], scaled[0], scaled[1], scaled_K, 300
    )[2]
    ours = protocols.scannet_errors(
        feats[0],
        feats[1],
        deps[0],
        deps[1],
        tensor(K),
        tensor(RT),
        300,
        SCALE,
        chunk_elements=50_000,
    )
    assert ours.shape == (300,) and len(weights.unique()) < 300  # ties do occur
    assert_equal_up_to_ties(ours, expected, weights)


def test_ratio_test_matches_equal_probe3ds():
    generator = torch.Generator().manual_seed(3)
    feat0, feat1 = (
        torch.randn((900, 32), generator=generator),
        torch.randn((700, 32), generator=generator),
    )
    idx0, idx1, weight = ref.get_correspondences_ratio_test(feat0, feat1, 250)
    ours = matching.ratio_test_matches(feat0, feat1, 250, chunk_elements=70_000)
    assert torch.equal(ours.source, idx0) and torch.equal(ours.target, idx1)
    torch.testing.assert_close(ours.weight, weight, rtol=1e-6, atol=1e-6)
    dists, nearest = ref.knn_points(feat0, feat1, 2, "cosine")
    our_dists, our_nearest = matching.knn2_cosine(feat0, feat1, chunk_elements=70_000)
    assert torch.equal(our_nearest, nearest)
    torch.testing.assert_close(our_dists, dists)


def navi_grids(Rt: np.ndarray, seed: int):
    """NAVI-like (3, H, W) camera-point grids of both views: the plane, with z = 0 outside an
    "object" disc and in random holes."""
    depths = scene(Rt, holes=0.1, seed=seed)
    rows, cols = np.mgrid[0:HEIGHT, 0:WIDTH]
    outside = (rows - HEIGHT / 2) ** 2 + (cols - WIDTH / 2) ** 2 > (0.45 * HEIGHT) ** 2
    grids = []
    for depth in depths:
        depth = np.where(outside, 0.0, depth)
        grids.append(backproject(depth, K).transpose(2, 0, 1))
    return grids


@pytest.mark.parametrize("seed", [0, 1])
def test_navi_errors_equal_probe3ds(seed):
    grid0, grid1 = navi_grids(RT, seed)
    generator = torch.Generator().manual_seed(seed)
    feats = torch.randn((2, 24, 12, 16), generator=generator)
    K1 = tensor(K) * torch.tensor([[1.3], [1.3], [1.0]])  # view 1's own (full-size) intrinsics
    exp3d, exp2d = ref.navi_pair_errors(
        feats[0], feats[1], tensor(grid0), tensor(grid1), tensor(RT), K1, 300, SCALE
    )
    err3d, err2d = protocols.navi_errors(
        feats[0], feats[1], tensor(grid0), tensor(grid1), tensor(RT), K1, 300, SCALE
    )
    torch.testing.assert_close(err3d, exp3d, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(err2d, exp2d, rtol=1e-5, atol=1e-5)


class _FixedFeatures:
    """Stands in for Probe3D's model: returns the given features whatever the images."""

    def __init__(self, feats: torch.Tensor):
        self.feats = feats

    def __call__(self, images: torch.Tensor) -> torch.Tensor:
        return self.feats


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_spair_errors_equal_probe3ds(seed):
    side, n_kps = 160, 20
    rng = np.random.default_rng(seed)
    feats = torch.from_numpy(rng.normal(size=(2, 16, 10, 10))).float()
    kps = []
    for _ in range(2):
        xy = rng.integers(0, side, size=(n_kps, 2))
        visible = rng.random(n_kps) < 0.7
        kps.append(torch.from_numpy(np.concatenate([xy, visible[:, None]], axis=1)).int())
    images = torch.zeros((3, side, side))
    masks = np.zeros((1, side, side))
    instance = (images, masks, kps[0], images, masks, kps[1], 0.37, "cat")
    expected = ref.compute_errors(_FixedFeatures(feats), instance)[0]
    ours = protocols.spair_errors(feats[0], feats[1], kps[0], kps[1], 0.37, side)
    torch.testing.assert_close(ours, expected, rtol=1e-5, atol=1e-5)
    assert len(ours) == int((kps[0][:, 2] * kps[1][:, 2]).sum())


def test_geometry_equals_probe3ds():
    depth = tensor(scene(RT, holes=0.3, seed=4)[1])
    torch.testing.assert_close(geometry.pixel_grid(7, 5), ref.get_grid(7, 5), rtol=0, atol=0)
    expected = ref.grid_to_pointcloud(tensor(K).inverse(), depth[None])
    torch.testing.assert_close(geometry.backproject_depth(depth, tensor(K)), expected)
    points = expected[expected[:, 2] > 0]
    torch.testing.assert_close(
        geometry.transform_points(points, tensor(RT)), ref.transform_points_Rt(points, tensor(RT))
    )
    torch.testing.assert_close(
        geometry.project(points, tensor(K)), ref.project_3dto2d(points, tensor(K))
    )


# ---- known answers ----


def test_features_of_the_3d_point_match_within_5_px():
    depth0, depth1 = scene(RT, holes=0.1, seed=5)
    points0, _ = scaled_points(depth0)
    points1, _ = scaled_points(depth1)
    # features at the scaled depth's resolution: each point reads its own pixel's feature
    feat0 = fourier(points0).transpose(2, 0, 1)
    feat1 = fourier(to_world(points1, RT)).transpose(2, 0, 1)
    errors = protocols.scannet_errors(
        tensor(feat0),
        tensor(feat1),
        tensor(depth0),
        tensor(depth1),
        tensor(K),
        tensor(RT),
        num_corr=500,
        scale_factor=SCALE,
    ).numpy()
    assert scores.recall(errors, [5.0])[0] >= 99.0
    assert np.median(errors) < 1.0  # about a point's spacing (1 px at this scale)


def test_features_of_the_3d_point_match_in_navi():
    grid0, grid1 = navi_grids(RT, seed=6)
    points0 = grid0[:, ::2, ::2].transpose(1, 2, 0)
    points1 = grid1[:, ::2, ::2].transpose(1, 2, 0)
    feat0 = fourier(points0).transpose(2, 0, 1)
    feat1 = fourier(to_world(points1, RT)).transpose(2, 0, 1)
    err3d, err2d = protocols.navi_errors(
        tensor(feat0),
        tensor(feat1),
        tensor(grid0),
        tensor(grid1),
        tensor(RT),
        tensor(K),
        num_corr=400,
        scale_factor=SCALE,
    )
    # neighbouring points at scale 0.5 lie 2 px apart in the image, 2 px * 2.5 m / 100 px = 5 cm
    assert scores.recall(err2d.numpy(), [5.0])[0] >= 99.0
    assert scores.recall(err3d.numpy(), [0.05])[0] >= 99.0


def chance_recall(source: np.ndarray, target: np.ndarray, threshold: float) -> float:
    """The share (%) of target locations within `threshold` of each source's true location,
    averaged over sources: the recall of matches drawn uniformly at random."""
    distances = np.linalg.norm(source[:, None, :] - target[None, :, :], axis=-1)
    return float(100.0 * (distances < threshold).mean())


def test_random_features_score_the_chance_level():
    depth0, depth1 = scene(RT, holes=0.1, seed=7)
    points0, K_s = scaled_points(depth0)
    points1, _ = scaled_points(depth1)
    valid0 = points0[points0[..., 2] > 0]
    valid1 = points1[points1[..., 2] > 0]
    moved = valid0 @ RT[:, :3].T + RT[:, 3]
    true_uv = moved[:, :2] / moved[:, 2:] * K_s[[0, 1], [0, 1]] + K_s[:2, 2]
    target_uv = valid1[:, :2] / valid1[:, 2:] * K_s[[0, 1], [0, 1]] + K_s[:2, 2]
    threshold = 10.0
    expected = chance_recall(true_uv, target_uv, threshold)
    # iid features at the points' own resolution: the procedure treats every source and every
    # target alike, so each match is a uniformly random (source, target) pair in expectation
    generator = torch.Generator().manual_seed(0)
    errors = []
    for _ in range(4):
        feat0 = torch.randn((16, 48, 64), generator=generator)
        feat1 = torch.randn((16, 48, 64), generator=generator)
        errors.append(
            protocols.scannet_errors(
                feat0,
                feat1,
                tensor(depth0),
                tensor(depth1),
                tensor(K),
                tensor(RT),
                num_corr=500,
                scale_factor=SCALE,
            ).numpy()
        )
    observed = scores.recall(np.concatenate(errors), [threshold])[0]
    # 2000 matches: a binomial standard error of sqrt(p (1 - p) / 2000), about 0.7 points at
    # p ~ 12%; 4.5 of them bound a false failure below 1e-5
    p = expected / 100.0
    tolerance = 4.5 * 100.0 * math.sqrt(p * (1 - p) / 2000)
    assert 5.0 < expected < 30.0  # the scene makes the check informative
    assert abs(observed - expected) < tolerance


def test_rotation_angles_of_known_rotations():
    angles = [0.0, 7.5, 45.0, 90.0, 135.0, 179.0]
    rotations = np.stack([rotation(np.array([1.0, -2.0, 0.5]), a) for a in angles])
    got = geometry.rotation_angle_deg(tensor(rotations))
    torch.testing.assert_close(got, torch.tensor(angles), rtol=0, atol=2e-2)
    assert geometry.rotation_angle_deg(tensor(rotations[3])).shape == ()
    with pytest.raises(VlstressError, match="not a rotation"):
        geometry.rotation_angle_deg(2.0 * torch.eye(3))


def test_recall_and_per_pair_recall_of_hand_made_errors():
    errors = np.array([1.0, 4.9, 5.0, 6.0, 11.0, 25.0])
    assert scores.recall(errors, [5, 10, 20]) == pytest.approx(
        [100 * 2 / 6, 100 * 4 / 6, 100 * 5 / 6]
    )
    pairs = [np.array([1.0, 12.0]), np.array([3.0, 4.0, 9.0, 30.0])]
    np.testing.assert_allclose(scores.per_pair_recall(pairs, 10.0), [50.0, 75.0])


def test_binned_recall_of_hand_made_numbers():
    per_pair = np.array([100.0, 50.0, 0.0, 100.0, 20.0, 40.0])
    angles = np.array([5.0, 20.0, 25.0, 100.0, 14.999, 180.0])  # 180 falls in no bin (Probe3D)
    binned = scores.binned_mean(per_pair, angles, scores.SCANNET_ANGLE_BINS)
    np.testing.assert_allclose(binned.means, [60.0, 25.0, np.nan, 100.0])
    assert binned.counts == (2, 2, 0, 1)
    assert binned.empty() == ("[30, 60)",)
    expected = ref.compute_binned_performance(
        torch.tensor(per_pair), torch.tensor(angles), list(scores.SCANNET_ANGLE_BINS)
    )
    np.testing.assert_allclose(binned.means, [float(v) for v in expected])


def test_spair_pck_of_hand_made_keypoints():
    side, cells, thresh_scale = 200, 5, 0.4
    # one-hot features: the similarity peaks exactly at the source keypoint's cell
    feats = torch.eye(cells * cells).reshape(cells * cells, cells, cells)
    cell = (3, 1)  # column, row
    # align_corners=True puts cell c at c * side / (cells - 1) px
    source = [cell[0] * side / (cells - 1), cell[1] * side / (cells - 1)]
    predicted = np.array(cell) / cells  # argmax cell / feature side, in [0, 1]
    near = (predicted + [0.09 * thresh_scale, 0.0]) * side
    far = (predicted + [0.0, 0.11 * thresh_scale]) * side
    kps_i = torch.tensor([[*source, 1], [*source, 1], [*source, 0]])
    kps_j = torch.tensor([[*near, 1], [*far, 1], [*near, 1]])
    errors = protocols.spair_errors(feats, feats, kps_i, kps_j, thresh_scale, side)
    np.testing.assert_allclose(errors.numpy(), [0.09, 0.11], rtol=1e-5)  # the hidden one is out
    recalls = scores.bucket_recalls({("cat", 0): errors.numpy(), ("cat", 1): np.array([])})
    assert recalls[("cat", 0)] == pytest.approx(50.0) and np.isnan(recalls[("cat", 1)])


def test_spair_mean_over_classes_ignores_empty_buckets():
    recalls = {
        ("cat", 0): 40.0,
        ("cat", 1): 20.0,
        ("cat", 2): float("nan"),
        ("cat", "all"): 30.0,
        ("dog", 0): 60.0,
        ("dog", 1): float("nan"),
        ("dog", 2): float("nan"),
        ("dog", "all"): 50.0,
    }
    means = scores.mean_over_classes(recalls, [0, 1, 2, "all"])
    assert means[0] == pytest.approx(50.0) and means[1] == pytest.approx(20.0)
    assert np.isnan(means[2]) and means["all"] == pytest.approx(40.0)


# ---- the search itself ----


def brute_force_knn2(query: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """The two most cosine-similar targets of each query by a full stable sort (float64): the
    lower index first among equal similarities."""
    q = torch.nn.functional.normalize(query.double(), dim=-1)
    t = torch.nn.functional.normalize(target.double(), dim=-1)
    return torch.sort(-(q @ t.T), dim=1, stable=True).indices[:, :2]


def test_chunked_knn_equals_brute_force_with_ties():
    generator = torch.Generator().manual_seed(9)
    query = torch.randn((61, 8), generator=generator)
    target = torch.randn((200, 8), generator=generator)
    target[150] = target[20]  # equal cosine distance to every query
    query[:10] = target[20]  # their nearest two tie: index 20 must come before 150
    for chunk_elements in (1, 450, 10**9):  # one row per chunk, 2 rows, everything at once
        dists, nearest = matching.knn2_cosine(query, target, chunk_elements)
        assert torch.equal(nearest, brute_force_knn2(query, target))
    assert torch.equal(nearest[:10], torch.tensor([[20, 150]] * 10))
    torch.testing.assert_close(dists[:10], torch.zeros((10, 2)), rtol=0, atol=1e-6)


def test_top_matches_break_ties_by_source_index():
    weights = torch.tensor([0.5, 0.9, 0.5, 0.9, 0.1, 0.5])
    nearest = torch.tensor([10, 11, 12, 13, 14, 15])
    kept = matching.top_matches(weights, nearest, 4)
    assert kept.source.tolist() == [1, 3, 0, 2]
    assert kept.target.tolist() == [11, 13, 10, 12]
    assert len(matching.top_matches(weights, nearest, 100).source) == 6


def test_scores_import_no_torch():
    """Report steps import no deep-learning library: the scores are NumPy only."""
    code = "import sys, vlstress.suites.correspondence.scores; sys.exit('torch' in sys.modules)"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    assert subprocess.run([sys.executable, "-c", code], env=env).returncode == 0
