"""3D Common Corruptions: fog's transmission at the released alphas, depth of field growing with
defocus, agreement with a transcription of the original torch code, depth encodings and
alignment, byte-identical files, the released layout's errors, the params check, the evaluation
command, the table and the towers."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from vlstress.errors import VlstressError
from vlstress.suites.corruptions_3d import depth as depths
from vlstress.suites.corruptions_3d import depth_corruptions as dc
from vlstress.suites.corruptions_3d import generate, released
from vlstress.testsets.manifest import ClassificationSet

# --- fog --------------------------------------------------------------------------------------


@pytest.mark.parametrize("severity,alpha", list(zip(range(1, 6), (4, 8, 12, 16, 20))))
def test_fog_transmission_is_exp_minus_alpha_depth(severity, alpha):
    """Half black, half white (mean 0.5) at a constant depth: white becomes t + 0.5 (1 - t) and
    black 0.5 (1 - t), t = exp(-alpha depth); the transmission read back gives alpha."""
    rgb = np.zeros((4, 6, 3))
    rgb[:, 3:] = 1.0
    depth = np.full((4, 6), 0.07)
    out = dc.fog_3d(rgb, depth, severity)
    t = np.exp(-alpha * 0.07)
    assert np.allclose(out[:, 3:], t + 0.5 * (1 - t))
    assert np.allclose(out[:, :3], 0.5 * (1 - t))
    recovered = -np.log((out[0, 5, 0] - 0.5) / (1 - 0.5)) / 0.07
    assert recovered == pytest.approx(alpha)


# --- depth of field ---------------------------------------------------------------------------


def checkerboard(height: int, width: int, square: int = 16) -> np.ndarray:
    rows, cols = np.indices((height, width)) // square
    return np.repeat(((rows + cols) % 2).astype(np.float64)[..., None], 3, axis=2)


def band_variances(image: np.ndarray, bands: int = 8) -> np.ndarray:
    """The variance of the image in horizontal bands, top to bottom, over the central half of
    the columns (a checkerboard's variance falls as it blurs; the replicated borders left out)."""
    quarter = image.shape[1] // 4
    return np.array(
        [band[:, quarter:-quarter, 0].var() for band in np.array_split(image, bands, axis=0)]
    )


RAMP = (256, 128)  # the synthetic depth: 0.5 at the top row to 0.05 at the bottom


def test_near_focus_sharp_near_and_blurrier_with_distance():
    """On the ramp (far at the top) focused at the nearest depth: the bottom rows stay sharp and
    the blur grows band by band towards the top (the top band, sharpened by the replicated
    border, left out); a higher severity blurs more."""
    rgb, depth = checkerboard(*RAMP), depths.synthetic(*RAMP)
    near = dc.refocus(rgb, depth, "near_focus", 1)
    v1 = band_variances(near)
    v5 = band_variances(dc.refocus(rgb, depth, "near_focus", 5))
    assert near[-2:, 32:-32].var() > 0.9 * rgb[-2:, 32:-32].var()  # the rows at the focus depth
    assert np.all(np.diff(v1[1:]) > 0) and np.all(np.diff(v5[1:]) > 0)
    assert np.all(v5 < v1)


def test_far_focus_sharp_at_the_seventh_quantile_and_blurriest_near():
    """Focused at the 7th of 8 depth quantiles (1/8 of the way down the ramp): the rows there stay
    sharp, and the blur grows band by band towards the near bottom."""
    rgb, depth = checkerboard(*RAMP), depths.synthetic(*RAMP)
    far = dc.refocus(rgb, depth, "far_focus", 3)
    focus = np.quantile(depth, 7 / 8)
    row = int(np.argmin(np.abs(depth[:, 0] - focus)))
    assert row == 32
    assert far[row - 1 : row + 1, 32:-32].var() > 0.9 * rgb[row - 1 : row + 1, 32:-32].var()
    variances = band_variances(far)
    assert np.all(np.diff(variances[1:]) < 0)


# --- a transcription of the original torch code (create_dof.py, create_fog.py) ----------------
# The functions as written there, on the CPU and without parallel_apply (one call after another);
# the composite's zeros take the input's dtype (there: float32), so that it runs in float64.


def _torch_reference(rgb: np.ndarray, depth: np.ndarray, severity: int):
    import torch
    import torch.nn.functional as F

    def gaussian(M, std, sym=True, device=None):
        if M < 1:
            return torch.tensor([])
        if M == 1:
            return torch.ones((1,))
        odd = M % 2
        if not sym and not odd:
            M = M + 1
        n = torch.arange(0, M, device=device) - (M - 1.0) / 2.0
        sig2 = 2 * std * std
        w = torch.exp(-(n**2) / sig2)
        if not sym and not odd:
            w = w[:-1]
        return w

    def separable_gaussian(img, r=3.5, cutoff=None, device=None):
        if device is None:
            device = img.device
        if r < 1e-1:
            return img
        if cutoff is None:
            cutoff = int(r * 5)
            if (cutoff % 2) == 0:
                cutoff += 1
        assert (cutoff % 2) == 1
        img = img.to(device)
        _, n_channels, w, h = img.shape
        std = r
        fil = gaussian(cutoff, std, device=device).to(device).to(img.dtype)
        filsum = fil.sum()
        fil = torch.stack([fil] * n_channels, dim=0)
        r_pad = int(cutoff)
        r_pad_half = r_pad // 2
        img = F.pad(img, (r_pad_half, r_pad_half, r_pad_half, r_pad_half), "replicate", 0)
        filtered = F.conv2d(
            img, fil.unsqueeze(1).unsqueeze(-2), bias=None, stride=1, padding=0, groups=n_channels
        )
        filtered /= filsum
        filtered = F.conv2d(
            filtered, fil.unsqueeze(1).unsqueeze(-1), bias=None, stride=1, padding=0,
            groups=n_channels,
        )  # fmt: skip
        filtered /= filsum
        return filtered

    def compute_circle_of_confusion_no_magnification(depths, aperture_size, focus_distance):
        return aperture_size * torch.abs(depths - focus_distance) / depths

    def compute_quantiles(depth, quantiles, eps=0.0001):
        depth_flat = depth.reshape(depth.shape[0], -1)
        quantile_vals = torch.quantile(depth_flat, quantiles, dim=1)
        quantile_vals[0] -= eps
        quantile_vals[-1] += eps
        return quantiles, quantile_vals

    def compute_quantile_membership(depth, quantile_vals):
        depth_flat = depth.reshape(depth.shape[0], -1)
        calculated_quantiles = torch.searchsorted(quantile_vals, depth_flat)
        calculated_quantiles_left = calculated_quantiles - 1
        quantile_right = torch.gather(quantile_vals, 1, calculated_quantiles).reshape(depth.shape)
        quantile_left = torch.gather(quantile_vals, 1, calculated_quantiles_left).reshape(
            depth.shape
        )
        quantile_dists = quantile_right - quantile_left
        dist_right = (quantile_right - depth) / quantile_dists
        dist_left = (depth - quantile_left) / quantile_dists
        return (
            dist_left,
            dist_right,
            calculated_quantiles_left.reshape(depth.shape),
            calculated_quantiles.reshape(depth.shape),
        )

    def get_blur_stack_single_image(rgb, blur_radii, cutoff_multiplier):
        args = []
        for r in blur_radii:
            cutoff = None if cutoff_multiplier is None else int(r * cutoff_multiplier)
            if cutoff is not None and (cutoff % 2) == 0:
                cutoff += 1
            args.append((rgb, r, cutoff))
        return torch.stack([separable_gaussian(*a) for a in args], dim=1)

    def get_blur_stack(rgb, blur_radii, cutoff_multiplier=None):
        outputs = [
            get_blur_stack_single_image(image.unsqueeze(0), radii, cutoff_multiplier)
            for image, radii in zip(rgb, blur_radii)
        ]
        return torch.cat(outputs, dim=0)

    def composite_blur_stack(blur_stack, dist_left, dist_right, values_left, values_right):
        shape = list(blur_stack.shape)
        shape[2] = 1
        composite_vals = torch.zeros(shape, dtype=blur_stack.dtype, device=blur_stack.device)
        sim_left = 1 - dist_left**2
        sim_right = 1 - dist_right**2
        composite_vals.scatter_(
            1, index=values_left.unsqueeze(1).unsqueeze(2), src=sim_left.unsqueeze(1).unsqueeze(2)
        )
        composite_vals.scatter_(
            1,
            index=values_right.unsqueeze(1).unsqueeze(2),
            src=sim_right.unsqueeze(1).unsqueeze(2),
        )
        composite_vals /= composite_vals.sum(dim=1, keepdims=True)
        return (composite_vals * blur_stack).sum(dim=1)

    def refocus_image(rgb, depth, focus_distance, aperture_size, quantile_vals):
        dist_left, dist_right, left, right = compute_quantile_membership(depth, quantile_vals)
        blur_radii = compute_circle_of_confusion_no_magnification(
            quantile_vals, aperture_size, focus_distance
        )
        blur_stack = get_blur_stack(rgb, blur_radii, cutoff_multiplier=3)
        return composite_blur_stack(blur_stack, dist_left, dist_right, left, right)

    def defocus_blur_3d(rgb_batch, depth_batch, n_quantiles=8, severity=1):
        rgb, depth = torch.cat((rgb_batch, rgb_batch)), torch.cat((depth_batch, depth_batch))
        quantiles = torch.arange(0, n_quantiles + 1, dtype=depth.dtype) / n_quantiles
        quantiles, quantile_vals = compute_quantiles(depth, quantiles, eps=0.0001)
        quantile_vals = quantile_vals.permute(1, 0)
        aperture = severity + 2.0
        focus_dist_idxs = torch.tensor([0, 7])  # sample_idxs_2: [:1] and [7:8]
        focus_dists = torch.gather(quantile_vals, 1, focus_dist_idxs.unsqueeze(0)).permute(1, 0)
        apertures = torch.tensor([[aperture]] * 2, dtype=depth.dtype)
        apertures[1] = (apertures[1] - 1.5) / 1.0
        return refocus_image(rgb, depth, focus_dists, apertures, quantile_vals)

    def fog_3d(rgb, depth, severity=1):
        alpha = [4, 8, 12, 16, 20][severity - 1]
        t = torch.exp(-alpha * depth).unsqueeze(1)
        return t * rgb + rgb.mean() * (1 - t)

    rgb_t = torch.from_numpy(rgb.transpose(2, 0, 1)[None].copy())
    depth_t = torch.from_numpy(depth[None].copy())
    near, far = defocus_blur_3d(rgb_t, depth_t, severity=severity)
    fog = fog_3d(rgb_t, depth_t, severity)[0]
    return {
        name: image.numpy().transpose(1, 2, 0)
        for name, image in (("near_focus", near), ("far_focus", far), ("fog_3d", fog))
    }


@pytest.mark.parametrize("severity", [1, 5])
def test_agrees_with_the_original_torch_code(severity):
    """Random images and depths (a smooth ramp plus noise, and uniform noise): every generated
    corruption within 1e-6 of the transcription."""
    rng = np.random.default_rng(severity)
    rgb = rng.random((37, 45, 3))
    for depth in (
        depths.synthetic(37, 45) + 0.01 * rng.random((37, 45)),
        rng.uniform(0.02, 0.5, (37, 45)),
    ):
        reference = _torch_reference(rgb, depth, severity)
        for name, expected in reference.items():
            ours = dc.corrupt(rgb, depth, name, severity)
            assert np.abs(ours - expected).max() < 1e-6, name


# --- depth ------------------------------------------------------------------------------------


def test_depth_encodings():
    """midas-inverse: 1 / (v / 512 + 1e-6), clamped to 0.5; taskonomy: v / 8000, >= 1 -> the
    largest below 1."""
    midas = depths.decode(np.array([[256.0, 2048.0, 51200.0]]), "midas-inverse")
    assert midas == pytest.approx(np.array([[0.5, 1 / (4 + 1e-6), 1 / (100 + 1e-6)]]))
    taskonomy = depths.decode(np.array([[2000.0, 4000.0, 65535.0, 8000.0]]), "taskonomy")
    assert taskonomy.tolist() == [[0.25, 0.5, 0.5, 0.5]]
    with pytest.raises(VlstressError, match="no measured value"):
        depths.decode(np.array([[9000.0]]), "taskonomy", "d.png")


def test_synthetic_ramp_is_far_at_the_top():
    ramp = depths.synthetic(5, 3)
    assert ramp[0].tolist() == [0.5] * 3 and ramp[-1] == pytest.approx([0.05] * 3)
    assert np.all(np.diff(ramp[:, 0]) < 0)
    assert "not measured" in depths.label("synthetic", "midas-inverse")


def test_depth_follows_the_images_resize_and_crop():
    """A depth of the original image's size (values: the column) gets the image's crop: constant
    down a column, increasing across, centred on the original centre; one of the cropped size is
    taken as it is; another size is resized to the original first."""
    columns = np.tile(np.arange(64, dtype=np.float64), (48, 1))
    out = depths.aligned(columns, (64, 48), 32)
    assert out.shape == (32, 32) and np.all(out == out[0])
    assert np.all(np.diff(out[0]) >= 0) and abs(out[0].mean() - 31.5) < 2
    same = np.arange(32 * 32, dtype=np.float64).reshape(32, 32)
    assert np.array_equal(depths.aligned(same, (64, 48), 32), same)
    half = depths.aligned(columns[::2, ::2], (64, 48), 32)  # a 32x24 depth of a 64x48 image
    assert np.abs(half - out).max() <= 2


def make_clean(root: Path, n: int = 3) -> ClassificationSet:
    rng = np.random.default_rng(0)
    images = []
    for i in range(n):
        (root / "imgs").mkdir(parents=True, exist_ok=True)
        Image.fromarray((rng.random((40, 52, 3)) * 255).astype(np.uint8)).save(
            root / "imgs" / f"im{i}.png"
        )
        images.append({"path": f"imgs/im{i}.png", "label": i % 2})
    return ClassificationSet("toy", "folders", ["a", "b"], ["a", "b"], str(root), images)


def write_depths(folder: Path, clean: ClassificationSet) -> None:
    rng = np.random.default_rng(1)
    for entry in clean.images:
        path = depths.depth_file(folder, entry["path"])
        path.parent.mkdir(parents=True, exist_ok=True)
        values = rng.integers(1000, 40000, (40, 52)).astype(np.uint16)
        Image.fromarray(values).save(path)


def files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*.png"))
        if p.is_file()
    }


def test_generated_files_are_byte_identical_on_rerun_and_name_their_depth(tmp_path):
    clean = make_clean(tmp_path / "clean")
    write_depths(tmp_path / "depth", clean)
    runs = []
    for run in ("a", "b"):
        data = generate.generate(
            clean, "far_focus", [1, 4], tmp_path / run, depth=str(tmp_path / "depth"), size=32
        )
        runs.append(files(tmp_path / run))
    assert runs[0] == runs[1] and len(runs[0]) == 6
    assert data.source["depth"] == "measured (midas-inverse)"
    assert [e["severity"] for e in data.images] == [1, 1, 1, 4, 4, 4]
    assert Image.open(tmp_path / "a" / "s4" / "000000.png").size == (32, 32)
    synthetic = generate.generate(clean, "fog_3d", [2], tmp_path / "fog", size=32)
    assert "not measured" in synthetic.source["depth"]


@pytest.mark.slow
def test_two_workers_write_the_same_files(tmp_path):
    clean = make_clean(tmp_path / "clean", n=4)
    for workers in (1, 2):
        generate.generate(clean, "near_focus", [3], tmp_path / f"w{workers}", size=32,
                          workers=workers)  # fmt: skip
    assert files(tmp_path / "w1") == files(tmp_path / "w2")


def test_a_missing_or_corrupt_depth_is_named_and_nothing_written(tmp_path):
    clean = make_clean(tmp_path / "clean")
    write_depths(tmp_path / "depth", clean)
    missing = depths.depth_file(tmp_path / "depth", "imgs/im1.png")
    missing.unlink()
    with pytest.raises(VlstressError, match=f"depth not found: {missing}"):
        generate.generate(clean, "fog_3d", [1], tmp_path / "out", depth=str(tmp_path / "depth"))
    missing.write_bytes(b"not a png")
    with pytest.raises(VlstressError, match=f"depth is corrupt or unreadable: {missing}"):
        generate.generate(clean, "fog_3d", [1], tmp_path / "out", depth=str(tmp_path / "depth"))
    Image.fromarray(np.zeros((40, 52), np.uint8)).save(missing)
    with pytest.raises(VlstressError, match="not a 16-bit"):
        generate.generate(clean, "fog_3d", [1], tmp_path / "out", depth=str(tmp_path / "depth"))
    assert not (tmp_path / "out").exists()


def test_a_release_only_corruption_is_not_generated(tmp_path):
    with pytest.raises(VlstressError, match="released ImageNet-3DCC only"):
        generate.generate(make_clean(tmp_path / "c"), "flash", [1], tmp_path / "out")


# --- the released ImageNet-3DCC ---------------------------------------------------------------


def imagenet_clean(root: Path) -> ClassificationSet:
    images = [{"path": f"n0144/ILSVRC2012_val_{i:08d}.JPEG", "label": i % 2} for i in range(1, 5)]
    return ClassificationSet("imagenet", "imagenet", ["a", "b"], ["n0144", "n0145"], str(root),
                             images)  # fmt: skip


def test_released_layout_is_read_in_place_and_a_wrong_one_refused_by_name(tmp_path):
    clean = imagenet_clean(tmp_path / "val")
    root = tmp_path / "3dcc"
    with pytest.raises(VlstressError, match="no folder fog_3d/"):
        root.mkdir()
        released.read_released(clean, "fog_3d", [1, 3], root, tmp_path / "out")
    (root / "fog_3d" / "1").mkdir(parents=True)
    with pytest.raises(VlstressError, match="no severity folder\\(s\\) 3"):
        released.read_released(clean, "fog_3d", [1, 3], root, tmp_path / "out")
    for severity in (1, 3):
        for entry in clean.images[:3]:
            path = root / "fog_3d" / str(severity) / entry["path"]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"x")
    with pytest.raises(VlstressError, match="2 of 8 files of imagenet are missing: 1/n0144/"):
        released.read_released(clean, "fog_3d", [1, 3], root, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    for severity in (1, 3):
        (root / "fog_3d" / str(severity) / clean.images[3]["path"]).write_bytes(b"x")
    data = released.read_released(clean, "fog_3d", [1, 3], root, tmp_path / "out")
    assert data.root == str(root / "fog_3d")
    assert data.images[4]["path"] == f"3/{clean.images[0]['path']}"


def test_released_needs_imagenet_val(tmp_path):
    (tmp_path / "r" / "flash" / "1").mkdir(parents=True)
    with pytest.raises(VlstressError, match="not ImageNet val"):
        released.read_released(
            make_clean(tmp_path / "c"), "flash", [1], tmp_path / "r", tmp_path / "o"
        )


# --- params -----------------------------------------------------------------------------------


def demo_params() -> dict:
    from vlstress import params as params_module

    from conftest import REPO

    return params_module.load([REPO / "params.yaml"])


def test_the_params_check_refuses_generating_a_release_only_corruption():
    from vlstress import params_check
    from vlstress.suites.corruptions_3d.params import problems

    params = demo_params()
    params_check.validate(params)
    assert params["corruptions_3d"]["names"] == ["near_focus", "far_focus", "fog_3d"]
    params["corruptions_3d"]["names"] = ["near_focus", "h265_crf", "fog3d"]
    found = problems(params, frozenset({"zeroshot", "corruptions_3d"}))
    assert any("h265_crf is read from the released ImageNet-3DCC only" in p for p in found)
    assert any("fog3d" in p and "fog_3d" in p for p in found)
    params["corruptions_3d"].update(names=["h265_crf"], source="/data/imagenet-3dcc")
    found = problems(params, frozenset({"zeroshot", "corruptions_3d"}))
    # a release-only name is fine when read from the release; the demo's set is no ImageNet val
    assert len(found) == 1
    assert "test set 'objects' is of kind 'demo-objects', not imagenet" in found[0]


# --- evaluation -------------------------------------------------------------------------------


def _project(root: Path) -> tuple[Path, dict[tuple[str, int], float]]:
    """params.yaml (the demo's: near_focus, far_focus, fog_3d at 1 and 5), the clean classifier and
    every condition's set and embeddings; the top-1 each condition must give."""
    import yaml

    from vlstress.io import sidecar, write_json, write_npy
    from vlstress.testsets import manifest as testsets

    from conftest import REPO

    params = yaml.safe_load((REPO / "params.yaml").read_text())
    block = params["corruptions_3d"]
    (root / "params.yaml").write_text(yaml.safe_dump(params))
    meta = {
        "provenance": {
            "model": {"slug": "m", "arch": "X", "weights_label": "random-init (seed 0)"},
            "seed": 0,
            "device": "cpu",
        }
    }
    clf = root / "results/embeddings/m/classifiers" / f"{block['testset']}.npy"
    write_npy(clf, np.eye(3, dtype=np.float32))
    write_json(sidecar(clf), {**meta, "classes": ["a", "b", "c"], "templates_source": "single"})
    truth = [0, 0, 1, 1, 2, 2]
    expected = {}
    for k, (name, severity) in enumerate(
        (n, s) for n in block["names"] for s in block["severities"]
    ):
        predicted = [(t + (i < k)) % 3 for i, t in enumerate(truth)]  # the first k wrong
        images = [
            {"path": f"{i}.png", "label": t, "severity": severity} for i, t in enumerate(truth)
        ]
        folder = root / "data/corruptions_3d" / name / f"s{severity}"
        testsets.write(
            folder / "manifest.json",
            testsets.ClassificationSet("o", "corruption_3d", ["a", "b", "c"], ["a", "b", "c"],
                                       str(folder), images),
        )  # fmt: skip
        emb = root / "results/embeddings/m/zeroshot/corrupted_3d" / f"{name}_s{severity}.npy"
        write_npy(emb, np.eye(3, dtype=np.float32)[predicted])
        write_json(sidecar(emb), meta)
        expected[(name, severity)] = 100 * (6 - min(k, 6)) / 6
    return root / "params.yaml", expected


def test_evaluate_writes_one_record_per_condition_with_its_depth(tmp_path, monkeypatch):
    from vlstress.record import read_record
    from vlstress.suites.corruptions_3d.commands import evaluate_corruptions_3d as command

    monkeypatch.chdir(tmp_path)
    params, expected = _project(tmp_path)
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    command.run(parser.parse_args(["--params", str(params), "--model", "m", "--out-dir", "out"]))
    for (name, severity), top1 in expected.items():
        record = read_record(tmp_path / "out" / f"corruption3d-{name}-s{severity}.json")
        assert record.task == "corruption_3d"
        assert record.condition["corruption"] == name and record.condition["severity"] == severity
        assert record.condition["depth"].startswith("synthetic ramp (not measured)")
        assert record.metrics["top1"] == pytest.approx(top1)
    assert (tmp_path / "out" / "corruption3d-fog_3d-s5.outcomes.npz").is_file()


# --- report -----------------------------------------------------------------------------------


def test_table_error_is_100_minus_the_mean_over_severities():
    from vlstress.suites.corruptions_3d.table import error_table

    rows = []
    for label, values in (("A", {1: 80.0, 5: 40.0}), ("B", {1: 60.0, 5: 20.0})):
        for severity, top1 in values.items():
            for name, shift in (("fog_3d", 0.0), ("near_focus", 10.0)):
                condition = json.dumps({"corruption": name, "severity": severity, "depth": "d"})
                rows.append(("corruption_3d", label, condition, "top1", top1 - shift))
                rows.append(("corruption_3d", label, condition, "top1_clean", 90.0))
    agg = pd.DataFrame(rows, columns=["task", "label", "condition_json", "metric", "mean"])
    agg["condition"] = agg["condition_json"]
    frame, notes = error_table(agg, {"A": "cnn", "B": "transformer"})
    assert frame is not None
    assert frame.loc["A", "fog 3d"] == "40.0" and frame.loc["A", "near focus"] == "50.0"
    assert frame.loc["A", "mean"] == "45.0" and frame.loc["B", "mean"] == "65.0"
    assert frame.loc["B", "clean"] == "10.0" and frame.loc["B", "tower"] == "transformer"
    assert "1, 5" in notes[0]


def test_table_gives_a_wilson_interval_to_one_share_and_none_to_a_mean():
    """Clean and a corruption measured at one severity are one share of the n images: their
    Wilson interval (statsmodels) on the error; a corruption over two severities and the mean over
    corruptions are means of shares: no interval. n comes from the long summary."""
    from statsmodels.stats.proportion import proportion_confint

    from vlstress.report.records import RECORD_COLUMNS, aggregate
    from vlstress.suites.corruptions_3d.table import error_table, images, render

    rows = []
    for name, severity, top1 in (("fog_3d", 1, 70.0), ("fog_3d", 5, 30.0), ("near_focus", 3, 60.0)):
        condition = json.dumps({"corruption": name, "severity": severity, "depth": "d"})
        for metric, value in (("top1", top1), ("top1_clean", 90.0)):
            row = dict.fromkeys(RECORD_COLUMNS)
            row.update(
                model="a", label="A", tower="cnn", dataset="objects", n_images=50, n_classes=4,
                task="corruption_3d", condition=condition, condition_label=condition,
                condition_json=condition, metric=metric, value=value,
            )  # fmt: skip
            rows.append(row)
    table = pd.DataFrame(rows)
    frame, _ = error_table(aggregate(table), {"A": "cnn"}, images(table))
    assert frame is not None
    row = frame.loc["A"]

    def wilson_error(errors: int, n: int) -> str:
        lo, hi = proportion_confint(errors, n, alpha=0.05, method="wilson")
        return f"{100 * errors / n:.1f} [{100 * lo:.1f}, {100 * hi:.1f}]"

    assert row["n"] == "50"
    assert row["clean"] == wilson_error(5, 50)  # 10 % error: 5 of 50 images
    assert row["near focus"] == wilson_error(20, 50) == "40.0 [27.6, 53.8]"  # one severity
    assert row["fog 3d"] == "50.0"  # the mean of severities 1 and 5: no interval
    assert row["mean"] == "45.0"  # the mean over corruptions: none
    markdown, latex, _ = render(table, {"step": "tables"})
    assert "95% Wilson interval over the n images" in markdown
    assert "the mean column have none" in markdown
    assert "95\\% Wilson interval" in latex and "40.0 [27.6, 53.8]" in latex


def test_towers_from_the_summary():
    from vlstress.suites.corruptions_3d.towers import towers

    table = pd.DataFrame(
        {"label": ["a", "a", "b", "c"], "tower": [None, "cnn", "transformer", None]}
    )
    assert towers(table) == {"a": "cnn", "b": "transformer", "c": "unknown"}


def test_figure_colours_lines_by_tower_and_states_n_and_depth():
    """Two CNN towers share a colour, the transformer has another; every corruption panel starts
    at the clean top-1 (severity 0) and carries a band per model; the mean panel has none."""
    from matplotlib.colors import to_hex

    from vlstress.report.records import RECORD_COLUMNS
    from vlstress.suites.corruptions_3d.figures import corruption_3d_severity

    rows = []
    for label, tower in (("A", "cnn"), ("B", "cnn"), ("C", "transformer")):
        for name in ("near_focus", "fog_3d"):
            for severity in (1, 5):
                condition = json.dumps(
                    {"corruption": name, "severity": severity, "depth": "synthetic ramp"}
                )
                for metric, value in (("top1", 70.0 - 10 * severity), ("top1_clean", 90.0)):
                    row = dict.fromkeys(RECORD_COLUMNS)
                    row.update(
                        label=label, tower=tower, dataset="objects", n_images=50, n_classes=4,
                        task="corruption_3d", condition_json=condition, metric=metric,
                        value=value,
                    )  # fmt: skip
                    rows.append(row)
    fig, notes = corruption_3d_severity(pd.DataFrame(rows))
    near, fog, mean, *_ = fig.axes
    lines = [line for line in near.get_lines() if len(line.get_xdata()) == 3]
    colours = [to_hex(line.get_color()) for line in lines]
    assert colours[0] == colours[1] != colours[2]
    assert [list(line.get_xdata()) for line in lines] == [[0, 1, 5]] * 3
    assert list(lines[0].get_ydata()) == [90.0, 60.0, 20.0]
    assert len(near.collections) == 3 and len(mean.collections) == 0
    assert notes[0] == "n = 50 images per model (objects)"
    assert "depth: synthetic ramp" in notes


def test_the_command_writes_a_manifest_that_names_the_depth(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    from vlstress.suites.corruptions_3d.commands import corrupt_3d
    from vlstress.testsets import manifest as testsets

    testsets.write(tmp_path / "clean.json", make_clean(tmp_path / "clean", n=2))
    parser = argparse.ArgumentParser()
    corrupt_3d.add_arguments(parser)
    argv = ["--manifest", str(tmp_path / "clean.json"), "--severities", "2", "--size", "32"]
    corrupt_3d.run(parser.parse_args([*argv, "--corruption", "near_focus", "--out", "o"]))
    data = testsets.load(Path("o") / "manifest.json")
    assert data.provenance["step"] == "corrupt-3d" and "scipy" in data.provenance["packages"]
    assert data.provenance["params"]["depth"] == "synthetic"
    assert data.source["depth"].startswith("synthetic ramp (not measured)")
    with pytest.raises(VlstressError, match="released ImageNet-3DCC only"):
        corrupt_3d.run(parser.parse_args([*argv, "--corruption", "z_motion_blur", "--out", "z"]))


# --- the corruptions of the image alone (create_non3d.py) -------------------------------------


def _original_non3d(x: np.ndarray, name: str, severity: int) -> np.ndarray:
    """create_non3d.py's iso_noise and low_light as written there (numpy's global generator)."""

    def iso_noise(x, severity=1):
        c_poisson = 25
        x = np.array(x) / 255.0
        x = np.clip(np.random.poisson(x * c_poisson) / c_poisson, 0, 1) * 255
        c_gauss = 0.7 * [0.08, 0.12, 0.18, 0.26, 0.38][severity - 1]
        x = np.array(x) / 255.0
        x = np.clip(x + np.random.normal(size=x.shape, scale=c_gauss), 0, 1) * 255
        return Image.fromarray(np.uint8(x))

    def poisson_gaussian_noise(x, severity=1):
        c_poisson = 10 * [60, 25, 12, 5, 3][severity - 1]
        x = np.array(x) / 255.0
        x = np.clip(np.random.poisson(x * c_poisson) / c_poisson, 0, 1) * 255
        c_gauss = 0.1 * [0.08, 0.12, 0.18, 0.26, 0.38][severity - 1]
        x = np.array(x) / 255.0
        x = np.clip(x + np.random.normal(size=x.shape, scale=c_gauss), 0, 1) * 255
        return Image.fromarray(np.uint8(x))

    def imadjust(x, a, b, c, d, gamma=1):
        return (((x - a) / (b - a)) ** gamma) * (d - c) + c

    def low_light(x, severity=1):
        c = [0.60, 0.50, 0.40, 0.30, 0.20][severity - 1]
        x = np.array(x) / 255.0
        x_scaled = imadjust(x, x.min(), x.max(), 0, c, gamma=2.0) * 255
        return poisson_gaussian_noise(x_scaled, severity=3)

    function = iso_noise if name == "iso_noise" else low_light
    return np.asarray(function(Image.fromarray(x), severity))


@pytest.mark.parametrize("name", ["iso_noise", "low_light"])
def test_noises_are_the_originals_drawn_from_the_images_seed(name):
    """With numpy's global state set to the image's generator, the original's function gives the
    same bytes; another seed other bytes; every severity the same draws."""
    from vlstress.suites.corruptions_3d import rgb_corruptions as rc

    image = (np.random.default_rng(0).random((20, 24, 3)) * 255).astype(np.uint8)
    saved = np.random.get_state()
    try:
        for severity in (1, 4):
            np.random.set_state(rc.rng_of(7).get_state())
            expected = _original_non3d(image, name, severity)
            assert np.array_equal(rc.corrupt(image, name, severity, 7), expected)
    finally:
        np.random.set_state(saved)
    assert not np.array_equal(rc.corrupt(image, name, 2, 7), rc.corrupt(image, name, 2, 8))


def test_color_quant_keeps_the_top_bits():
    from vlstress.suites.corruptions_3d.rgb_corruptions import color_quant

    image = np.array([[[200, 255, 7]]], dtype=np.uint8)
    assert color_quant(image, 3).tolist() == [[[192, 224, 0]]]  # 3 bits
    assert color_quant(image, 5).tolist() == [[[128, 128, 0]]]  # 1 bit


def test_a_noise_set_is_seeded_per_image_and_needs_no_depth(tmp_path):
    clean = make_clean(tmp_path / "clean")
    data = generate.generate(clean, "iso_noise", [1, 5], tmp_path / "a", size=32, seed=3)
    generate.generate(clean, "iso_noise", [1, 5], tmp_path / "b", size=32, seed=3)
    generate.generate(clean, "iso_noise", [1, 5], tmp_path / "c", size=32, seed=4)
    assert files(tmp_path / "a") == files(tmp_path / "b") != files(tmp_path / "c")
    assert data.source["depth"] == "none (no depth needed)" and data.source["seed"] == 3
