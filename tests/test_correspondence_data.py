"""Correspondence datasets: the pair list file, the release readers (layouts, sampling as
Probe3D's), one pair's arrays per protocol, and the synthetic releases."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from vlstress.errors import VlstressError
from vlstress.suites.correspondence import kinds, loading, pairs, synthetic

# ---------------------------------------------------------------------------------------------
# helpers


def rot_z(deg: float) -> np.ndarray:
    a = math.radians(deg)
    return np.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1]])


def touch(path: Path, data: bytes = b"") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def write_json(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj), encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# the pair list file


def a_view_pair() -> pairs.ViewPair:
    K = ((100.0, 0.0, 32.0), (0.0, 100.0, 24.0), (0.0, 0.0, 1.0))
    Rt = tuple(tuple(float(v) for v in row) for row in np.eye(4))
    return pairs.ViewPair(
        "p0", ("a.jpg", "b.jpg"), ("a.png", "b.png"), "scannet-mm", (K, K), Rt, 0.0
    )


def test_pair_list_round_trips_and_names_the_file_and_key_of_a_bad_one(tmp_path):
    view = pairs.PairList(pairs.Header("scannet-1500", "data/x", {"a": 1}, 8), (a_view_pair(),))
    keypoint = pairs.PairList(
        pairs.Header("spair-71k", "data/y"),
        (
            pairs.KeypointPair(
                "1-a-b:cat",
                "cat",
                ("a.jpg", "b.jpg"),
                (((1.0, 2.0), None), (None, (3.0, 4.5))),
                (10.0, 20.0, 50.0, 40.0),
                (200, 100),
                2,
            ),
        ),
    )
    for n, pair_list in enumerate((view, keypoint)):
        path = tmp_path / f"{n}.json"
        pairs.write(path, pair_list)
        assert pairs.read(path) == pair_list
    # threshold scale by hand: max(40, 20) / max(200, 100)
    assert keypoint.pairs[0].threshold_scale == pytest.approx(0.2)

    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(VlstressError, match="bad.json"):
        pairs.read(bad)
    data = json.loads((tmp_path / "0.json").read_text())
    del data["pairs"][0]["Rt_01"]
    write_json(bad, data)
    with pytest.raises(VlstressError, match=r"bad.json.*pairs\[0\].*`Rt_01`"):
        pairs.read(bad)
    del data["kind"]
    write_json(bad, data)
    with pytest.raises(VlstressError, match="bad.json.*`kind`"):
        pairs.read(bad)


# ---------------------------------------------------------------------------------------------
# scannet-1500


def fake_scannet(root: Path) -> dict:
    """Two scenes; pose 0 of each the identity, the others a rotation about z plus a shift."""
    K = {"scene0707_00": np.diag([500.0, 510.0, 1.0]), "scene0711_02": np.diag([400.0, 400.0, 1.0])}
    K["scene0707_00"][:2, 2] = (320, 240)
    root.mkdir(parents=True)
    np.savez(root / "intrinsics.npz", **K)  # type: ignore[arg-type]
    rows = np.array([[711, 2, 0, 30], [707, 0, 0, 15]])
    np.savez(root / "test.npz", name=rows)
    poses = {}
    for scene, frame, angle, shift in (
        ("scene0707_00", 0, 0, (0, 0, 0)),
        ("scene0707_00", 15, 25, (0.1, 0.2, 0.3)),
        ("scene0711_02", 0, 0, (0, 0, 0)),
        ("scene0711_02", 30, 70, (1.0, 0, 0)),
    ):
        pose = np.eye(4)
        pose[:3, :3], pose[:3, 3] = rot_z(angle), shift
        poses[scene, frame] = pose
        text = "\n".join(" ".join(repr(float(v)) for v in row) for row in pose)
        touch(root / scene / "pose" / f"{frame}.txt", text.encode())
        touch(root / scene / "color" / f"{frame}.jpg")
        touch(root / scene / "depth" / f"{frame}.png")
    return {"K": K, "poses": poses}


def test_scannet_reader_gives_K_Rt_01_and_angles_in_test_npz_order(tmp_path):
    root = tmp_path / "scannet_test_1500"
    truth = fake_scannet(root)
    pair_list = kinds.read_release("scannet-1500", root)
    assert [p.pair_id for p in pair_list.pairs] == [
        "0000-scene0711_02-0-30",
        "0001-scene0707_00-0-15",
    ]
    assert not pair_list.header.synthetic
    second = pair_list.pairs[1]
    assert second.images == ("scene0707_00/color/0.jpg", "scene0707_00/color/15.jpg")
    assert second.depths == ("scene0707_00/depth/0.png", "scene0707_00/depth/15.png")
    np.testing.assert_allclose(second.intrinsics[0], truth["K"]["scene0707_00"])
    # by hand: pose0 = I, pose1 = [Rz(25) | t]: inv(pose1) @ pose0 = [Rz(-25) | -Rz(-25) t]
    expected = np.eye(4)
    expected[:3, :3] = rot_z(-25)
    expected[:3, 3] = -rot_z(-25) @ np.array([0.1, 0.2, 0.3])
    np.testing.assert_allclose(second.Rt_01, expected, atol=1e-12)
    assert [p.rotation_deg for p in pair_list.pairs] == pytest.approx([70.0, 25.0])


@pytest.mark.parametrize(
    "remove, named",
    [
        ("test.npz", "test.npz"),
        ("intrinsics.npz", "intrinsics.npz"),
        ("scene0707_00/pose/15.txt", "15.txt"),
        ("scene0711_02/depth/30.png", "30.png"),
    ],
)
def test_scannet_reader_refuses_a_wrong_layout_by_name(tmp_path, remove, named):
    root = tmp_path / "release"
    fake_scannet(root)
    (root / remove).unlink()
    with pytest.raises(VlstressError, match=rf"scannet-1500 release: missing file .*{named}"):
        kinds.read_release("scannet-1500", root)


def test_an_unknown_kind_and_a_missing_root_are_refused(tmp_path):
    with pytest.raises(VlstressError, match="unknown correspondence kind 'scannet'"):
        kinds.read_release("scannet", tmp_path)
    with pytest.raises(VlstressError, match="folder not found"):
        kinds.read_release("navi", tmp_path / "nowhere")
    with pytest.raises(VlstressError, match="unknown sampling setting.*per_bucket; known: none"):
        kinds.read_release("scannet-1500", tmp_path, per_bucket=3)


# ---------------------------------------------------------------------------------------------
# navi: Probe3D's pairing, transcribed from evals/datasets/navi.py and utils.py (MIT License,
# Copyright (c) 2024 Mohamed El Banani), run on the same SORTED ids as ours.


def probe3d_quaternion_to_rotation_matrix(q):
    q = torch.as_tensor(q, dtype=torch.float32)
    w, x, y, z = torch.unbind(q, dim=-1)
    ZERO = torch.zeros_like(z)
    ONES = torch.ones_like(z)
    s = 2.0 / (q * q).sum(dim=-1)
    R_00 = 1 - s * (y**2 + z**2)
    R_01 = s * (x * y - z * w)
    R_02 = s * (x * z + y * w)
    R_10 = s * (x * y + z * w)
    R_11 = 1 - s * (x**2 + z**2)
    R_12 = s * (y * z - x * w)
    R_20 = s * (x * z - y * w)
    R_21 = s * (y * z + x * w)
    R_22 = 1 - s * (x**2 + y**2)
    rotation = torch.stack(
        [
            R_00,
            R_01,
            R_02,
            ZERO,
            R_10,
            R_11,
            R_12,
            ZERO,
            R_20,
            R_21,
            R_22,
            ZERO,
            ZERO,
            ZERO,
            ZERO,
            ONES,
        ],
        dim=-1,
    )
    return rotation.reshape(q.shape[:-1] + (4, 4))


def probe3d_translate(v):
    result = torch.as_tensor(v, dtype=torch.float32)
    dimensions = result.shape[-1]
    result = result[..., None, :].transpose(-1, -2)
    result = torch.constant_pad_nd(result, [dimensions, 0, 0, 1])
    id_matrix = torch.diag(result.new_ones([dimensions + 1]))
    id_matrix = id_matrix.expand_as(result)
    return result + id_matrix


def probe3d_camera(anno):
    return probe3d_translate(anno["camera"]["t"]) @ probe3d_quaternion_to_rotation_matrix(
        anno["camera"]["q"]
    )


def probe3d_navi_pairs(data_dict, max_angle=120):
    """define_instances_split("all", "wild", "all"), generate_instance_pairs, instances[::4]."""
    instances = []
    for obj_id in data_dict:
        scenes = list(data_dict[obj_id].keys())
        if "wild_set" not in scenes or len(scenes) == 1:
            continue
        for _id in data_dict[obj_id]["wild_set"]["views"]:
            instances.append((obj_id, "wild_set", _id))
    torch.manual_seed(8)
    inst_dict = {}
    for obj_id, coll_id, img_id in instances:
        inst_dict.setdefault(obj_id, {}).setdefault(coll_id, []).append(img_id)
    pair_dict = {}
    for obj_id in inst_dict:
        pair_dict[obj_id] = {}
        for col_id in inst_dict[obj_id]:
            pair_dict[obj_id][col_id] = {}
            rots, img_ids = [], []
            for img_id in inst_dict[obj_id][col_id]:
                anno = data_dict[obj_id][col_id]["annotations"][img_id]
                rots.append(probe3d_camera(anno)[:3, :3])
                img_ids.append(img_id)
            rots = torch.stack(rots, dim=0)
            for i in range(len(img_ids)):
                rots_i = rots[i, None].repeat(len(rots), 1, 1)
                rots_ij = torch.bmm(rots_i, rots.permute(0, 2, 1))
                rots_tr = rots_ij[:, 0, 0] + rots_ij[:, 1, 1] + rots_ij[:, 2, 2]
                rel_ang_rad = (0.5 * rots_tr - 0.5).clamp(min=-1, max=1).acos()
                rel_ang_deg = rel_ang_rad * 180 / np.pi
                rel_ang_deg[rel_ang_deg > max_angle] = 0
                rel_ang_deg[rel_ang_deg > 0] = 1
                pair_i = torch.multinomial(rel_ang_deg, 1).item()
                pair_dict[obj_id][col_id][img_ids[i]] = img_ids[pair_i]
    return [(o, i, pair_dict[o][c][i]) for o, c, i in instances[::4]]


NAVI_ANGLES = {"obj_b": [0, 10, 40, 100, 170, 200, 250], "obj_a": [5, 60, 130, 300, 320]}


def fake_navi(root: Path) -> dict:
    """obj_a, obj_b (wild_set + multiview_00) and obj_c (wild_set only: skipped); cameras rotate
    about z by the angles above, translations in millimetres."""
    truth = {}
    for obj, angles in [*NAVI_ANGLES.items(), ("obj_c", [0, 30])]:
        folder = root / obj / "wild_set"
        rows = []
        for k, angle in enumerate(angles):
            img = f"{k:03d}"
            half = math.radians(angle) / 2
            camera = {
                "q": [math.cos(half), 0, 0, math.sin(half)],
                "t": [10.0 * k, -5.0, 800.0],
                "focal_length": 1000.0 + k,
            }
            rows.append({"filename": f"{img}.jpg", "camera": camera, "image_size": [768, 1024]})
            truth[obj, img] = (angle, np.array(camera["t"]) / 1000)
            for name in (f"{img}.jpg", f"downsampled_{img}.jpg"):
                touch(folder / "images" / name)
            touch(folder / "depth" / f"downsampled_{img}.png")
        random.Random(obj).shuffle(rows)  # annotation order must not matter
        write_json(folder / "annotations.json", rows)
        if obj != "obj_c":
            (root / obj / "multiview_00").mkdir()
    return truth


def probe3d_data_dict(root: Path) -> dict:
    """Probe3D's parse_dataset, with our sorted ids and objects."""
    data: dict = {}
    for obj in sorted(p.name for p in root.iterdir()):
        data[obj] = {}
        for coll in sorted(p.name for p in (root / obj).iterdir()):
            if coll != "wild_set":
                data[obj][coll] = {}
                continue
            files = sorted((root / obj / coll / "images").iterdir())
            ids = [f.name.split(".")[0] for f in files if "jpg" in f.name]
            annos = json.loads((root / obj / coll / "annotations.json").read_text())
            data[obj][coll] = {
                "views": [i for i in ids if "_" not in i],
                "annotations": {a["filename"].split(".")[0]: a for a in annos},
            }
    return data


def test_navi_pairs_equal_probe3d_sampling_and_poses_by_hand(tmp_path):
    root = tmp_path / "navi_v1"
    truth = fake_navi(root)
    pair_list = kinds.read_release("navi", root)
    ours = [(p.pair_id.split("/")[0], *p.pair_id.split("/")[1].split("-")) for p in pair_list.pairs]
    assert ours == probe3d_navi_pairs(probe3d_data_dict(root))
    assert len(ours) == 3  # 12 wild images of the two kept objects, every 4th
    for pair, (obj, img0, img1) in zip(pair_list.pairs, ours, strict=True):
        (angle0, t0), (angle1, t1) = truth[obj, img0], truth[obj, img1]
        assert (
            0 < abs(angle1 - angle0) % 360
            and min(abs(angle1 - angle0), 360 - abs(angle1 - angle0)) <= 120
        )
        # by hand: x1 = R1 R0^T x0 + t1 - R1 R0^T t0, all rotations about z
        R = rot_z(angle1 - angle0)
        expected = np.eye(4)
        expected[:3, :3], expected[:3, 3] = R, t1 - R @ t0
        np.testing.assert_allclose(pair.Rt_01, expected, atol=1e-6)
        d = abs(angle1 - angle0) % 360
        assert pair.rotation_deg == pytest.approx(min(d, 360 - d), abs=1e-3)
        assert pair.images[0] == f"{obj}/wild_set/images/downsampled_{img0}.jpg"
        k = int(img0)
        assert pair.intrinsics[0] == ((1000.0 + k, 0, 512.0), (0, 1000.0 + k, 384.0), (0, 0, 1))
    assert pair_list.header.seed == 8 and pair_list.header.sampling["max_angle"] == 120


def test_navi_sampling_is_deterministic_and_follows_the_seed(tmp_path):
    root = tmp_path / "navi_v1"
    fake_navi(root)
    first = kinds.read_release("navi", root, every=1)
    assert kinds.read_release("navi", root, every=1) == first
    other = kinds.read_release("navi", root, every=1, seed=9)
    assert [p.pair_id for p in other.pairs] != [p.pair_id for p in first.pairs]
    assert all(0 < p.rotation_deg <= 120 + 1e-3 for p in first.pairs)


@pytest.mark.parametrize(
    "remove, named",
    [
        ("obj_a/wild_set/annotations.json", "annotations.json"),
        ("obj_b/wild_set/depth/downsampled_004.png", "downsampled_004.png"),
    ],
)
def test_navi_reader_refuses_a_wrong_layout_by_name(tmp_path, remove, named):
    root = tmp_path / "navi_v1"
    fake_navi(root)
    (root / remove).unlink()
    with pytest.raises(VlstressError, match=rf"navi release: missing file .*{named}"):
        kinds.read_release("navi", root, every=1)


def test_navi_reader_refuses_a_folder_without_objects(tmp_path):
    (tmp_path / "x" / "wild_set").mkdir(parents=True)
    with pytest.raises(VlstressError, match="wild_set folder and a multiview_"):
        kinds.read_release("navi", tmp_path)


# ---------------------------------------------------------------------------------------------
# spair-71k: Probe3D's SPairDataset selection, transcribed, on the same sorted file list


def probe3d_spair(instances, class_name, vp_diff, num_instances):
    if class_name:
        c_insts = [_a for _a in instances if _a["category"] == class_name]
        instances = c_insts
    if vp_diff is not None:
        instances = [_a for _a in instances if _a["viewpoint_variation"] == vp_diff]
    if num_instances:
        random.seed(20)
        random.shuffle(instances)
        instances = instances[:num_instances]
    return instances


SPAIR_COUNTS = {("dog", 0): 7, ("dog", 1): 2, ("cat", 0): 5, ("cat", 2): 4, ("cat", 1): 1}


def fake_spair(root: Path) -> None:
    number = 0
    for (category, bucket), count in SPAIR_COUNTS.items():
        for _ in range(count):
            number += 1
            src, trg = f"2008_{number:06d}", f"2009_{number:06d}"
            name = f"{number:06d}-{src}-{trg}:{category}"
            write_json(
                root / "PairAnnotation" / "test" / f"{name}.json",
                {
                    "filename": name,
                    "category": category,
                    "viewpoint_variation": bucket,
                    "trg_bndbox": [10, 20, 110, 70],
                    "trg_imsize": [400, 300, 3],
                },
            )
            for image, kps in ((src, {"0": [5, 6], "1": None}), (trg, {"0": None, "1": [7.5, 8]})):
                write_json(root / "ImageAnnotation" / category / f"{image}.json", {"kps": kps})
                touch(root / "JPEGImages" / category / f"{image}.jpg")
    write_json(root / "PairAnnotation" / "trn" / "000999-a-b:cat.json", {})


def test_spair_sampling_equals_probe3d_on_sorted_files(tmp_path):
    root = tmp_path / "SPair-71k"
    fake_spair(root)
    pair_list = kinds.read_release("spair-71k", root, per_bucket=3)
    files = sorted((root / "PairAnnotation" / "test").glob("*.json"))
    annotations = [json.loads(p.read_text()) for p in files]
    expected = [
        row["filename"]
        for category in ("cat", "dog")
        for bucket in (0, 1, 2)
        for row in probe3d_spair(list(annotations), category, bucket, 3)
    ]
    assert len(expected) == 3 + 1 + 3 + 3 + 2  # up to 3 per class and bucket
    # Probe3D's fourth run per class (vp_diff None): its own sample of any bucket, reported `all`
    everything = {
        row["filename"]
        for category in ("cat", "dog")
        for row in probe3d_spair(list(annotations), category, None, 3)
    }
    found = [p.pair_id for p in pair_list.pairs]
    assert found[: len(expected)] == expected
    assert set(found) == set(expected) | everything and len(found) == len(set(found))
    for pair in pair_list.pairs:
        in_bucket = {str(pair.viewpoint_variation)} if pair.pair_id in expected else set()
        in_all = {"all"} if pair.pair_id in everything else set()
        assert set(pair.samples) == in_bucket | in_all
    first = pair_list.pairs[0]
    assert first.keypoints == (((5.0, 6.0), None), (None, (7.5, 8.0)))
    assert first.threshold_scale == pytest.approx(100 / 400)
    assert first.images[0].startswith(f"JPEGImages/{first.category}/2008_")
    assert kinds.read_release("spair-71k", root, per_bucket=3) == pair_list


def test_spair_reader_refuses_a_wrong_layout_by_name(tmp_path):
    root = tmp_path / "SPair-71k"
    fake_spair(root)
    with pytest.raises(VlstressError, match=r"missing folder .*PairAnnotation/val"):
        kinds.read_release("spair-71k", root, split="valid")
    image = next((root / "ImageAnnotation" / "dog").glob("*.json"))
    image.unlink()
    with pytest.raises(VlstressError, match=rf"missing file .*{image.name}"):
        kinds.read_release("spair-71k", root)
    pair_file = next((root / "PairAnnotation" / "test").glob("*.json"))
    write_json(pair_file, {"filename": "x"})
    with pytest.raises(VlstressError, match=rf"{pair_file.name}.*misses key `category`"):
        kinds.read_release("spair-71k", root)


# ---------------------------------------------------------------------------------------------
# loading


def test_scannet_loading_resizes_normalises_and_reads_depth_in_metres(tmp_path):
    image = np.zeros((12, 16, 3), dtype=np.uint8)
    image[:, 8:] = 255
    for frame in (0, 1):
        touch(tmp_path / f"c{frame}.jpg")
        Image.fromarray(image).save(tmp_path / f"c{frame}.jpg", format="PNG")  # lossless
        Image.fromarray(np.full((6, 8), 1500 + frame, dtype=np.uint16)).save(
            tmp_path / f"d{frame}.png"
        )
    pair = pairs.ViewPair(
        "p",
        ("c0.jpg", "c1.jpg"),
        ("d0.png", "d1.png"),
        "scannet-mm",
        a_view_pair().intrinsics,
        a_view_pair().Rt_01,
        0.0,
    )
    loaded = loading.scannet_pair(pair, tmp_path)
    assert loaded.images[0].shape == (3, 480, 640)
    # mean = std = 0.5: black -> -1, white -> +1
    assert loaded.images[0][:, 0, 0].tolist() == [-1.0, -1.0, -1.0]
    assert loaded.images[1][:, 479, 639].tolist() == [1.0, 1.0, 1.0]
    assert loaded.depths[1].shape == (1, 6, 8)
    assert torch.all(loaded.depths[1] == torch.tensor(1.501))
    assert loaded.K.dtype == torch.float32 and loaded.K[0, 2] == 32.0

    (tmp_path / "d1.png").unlink()
    with pytest.raises(VlstressError, match="depth not found: .*d1.png"):
        loading.scannet_pair(pair, tmp_path)
    (tmp_path / "c0.jpg").write_bytes(b"not an image")
    with pytest.raises(VlstressError, match="image .*c0.jpg cannot be read"):
        loading.scannet_pair(pair, tmp_path)


def test_spair_loading_pads_resizes_and_scales_keypoints(tmp_path):
    image = np.zeros((40, 60, 3), dtype=np.uint8)  # h 40, w 60: padded to 60 x 60 with white
    for name in ("a", "b"):
        Image.fromarray(image).save(tmp_path / f"{name}.jpg", format="PNG")
    pair = pairs.KeypointPair(
        "p",
        "cat",
        ("a.jpg", "b.jpg"),
        (((10.0, 20.0), None), ((11.0, 21.0), (59.0, 39.0))),
        (0.0, 0.0, 30.0, 12.0),
        (60, 40),
        0,
    )
    loaded = loading.spair_pair(pair, tmp_path, size=30)
    assert loaded.images[0].shape == (3, 30, 30)
    mean, std = np.array(loading.IMAGENET_MEAN), np.array(loading.IMAGENET_STD)
    np.testing.assert_allclose(loaded.images[0][:, 0, 0], -mean / std, rtol=1e-6)
    np.testing.assert_allclose(loaded.images[0][:, 29, 0], (1 - mean) / std, rtol=1e-6)  # pad
    # x * 30 / 60, truncated as Probe3D's int tensors: 10 -> 5, 21 -> 10.5 -> 10, 59 -> 29.5 -> 29
    assert loaded.keypoints[0].tolist() == [[5.0, 10.0], [0.0, 0.0]]
    assert loaded.keypoints[1].tolist() == [[5.0, 10.0], [29.0, 19.0]]
    assert loaded.visible[0].tolist() == [True, False]
    assert loaded.kps(0).tolist() == [[5.0, 10.0, 1.0], [0.0, 0.0, 0.0]]
    assert loaded.threshold_scale == pytest.approx(30 / 60)


def probe3d_navi_single(image_path, depth_path, anno, size, cv2):
    """Probe3D's NAVI get_single for the test split (its transforms, read_depth, bbox_crop; the
    shared albumentations Resize(size, size, interpolation=0) is cv2.resize nearest)."""
    from PIL import ImageOps
    from torchvision import transforms as T

    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    near = T.InterpolationMode.NEAREST
    image_transform = T.Compose(
        [
            T.ToTensor(),
            T.Normalize(mean=mean, std=std),
            T.Resize(size, interpolation=near),
            T.CenterCrop(size),
        ]
    )
    target_transform = T.Compose(
        [T.ToTensor(), T.Resize(size, interpolation=near), T.CenterCrop(size)]
    )
    with Image.open(image_path) as im:
        image = ImageOps.exif_transpose(im)
        image = image_transform(image)
    raw = np.array(Image.open(depth_path)).astype("uint16").astype(np.float32)
    disparity = raw / ((2**16 - 1) * 10.0)
    disparity[disparity == 0] = np.inf
    depth = (1 / disparity) / 1000
    min_depth = depth[depth > 0].min()
    depth = target_transform(depth)
    orig_h, orig_w = anno["image_size"]
    image_h, image_w = image.shape[1:]
    aug_fx = anno["camera"]["focal_length"] * min(image_h, image_w) / min(orig_h, orig_w)
    intrinsics = torch.eye(3)
    intrinsics[0, 0] = aug_fx
    intrinsics[1, 1] = aug_fx
    intrinsics[0, 2] = 0.5 * image_h
    intrinsics[1, 2] = 0.5 * image_w
    xs = torch.linspace(0.5, image_w - 0.5, image_w).view(1, image_w).repeat(image_h, 1)
    ys = torch.linspace(0.5, image_h - 0.5, image_h).view(image_h, 1).repeat(1, image_w)
    grid = torch.stack((xs, ys, torch.ones_like(xs)), dim=0)
    xyz_grid = (intrinsics.inverse() @ (depth * grid).view(3, -1)).view(3, image_h, image_w)
    mask = depth > 0
    mask_coords = mask.nonzero()
    tl_coord = mask_coords.min(dim=0).values[1:]
    br_coord = mask_coords.max(dim=0).values[1:]
    box_size = br_coord - tl_coord
    img_size = torch.tensor(mask.shape[1:])
    pad_size = box_size.max() - box_size
    tl_cent = tl_coord - pad_size // 2
    bl_cent = tl_cent + box_size.max()
    if (tl_cent >= 0).all() and (bl_cent <= img_size).all():
        tl, br = tl_cent, bl_cent
    else:
        tl = (tl_coord - pad_size).clip(min=0)
        br = tl + box_size.max()
    crop = (slice(None), slice(int(tl[0]), int(br[0])), slice(int(tl[1]), int(br[1])))
    image, depth, xyz_grid = image[crop], depth[crop], xyz_grid[crop]
    bbox_h, bbox_w = image.shape[1:]

    def resize(t):
        out = cv2.resize(t.permute(1, 2, 0).numpy(), (size, size), interpolation=0)
        return torch.tensor(out.reshape(size, size, -1)).float().permute(2, 0, 1)

    image, depth, xyz_grid = resize(image), resize(depth), resize(xyz_grid)
    final_fx = aug_fx * size / min(bbox_h, bbox_w)
    K = torch.eye(3)
    K[:2] = final_fx * K[:2]
    depth[depth < min_depth] = 0
    return image, depth, xyz_grid, K


def test_nearest_resize_picks_opencvs_source_pixels():
    cv2 = pytest.importorskip("cv2")
    for n in (1, 7, 186, 372, 513, 1024):  # 186 and 372: torch's nearest picks other pixels
        image = np.arange(3 * n * (n + 5), dtype=np.float32).reshape(n, n + 5, 3)
        expected = cv2.resize(image, (64 if n < 100 else 512,) * 2, interpolation=cv2.INTER_NEAREST)
        ours = loading.resize_nearest_cv2(
            torch.from_numpy(image).permute(2, 0, 1), expected.shape[0]
        )
        assert np.array_equal(ours.permute(1, 2, 0).numpy(), expected)


def test_navi_loading_equals_probe3d_get_single(tmp_path):
    cv2 = pytest.importorskip("cv2")
    rng = np.random.default_rng(0)
    Image.fromarray(rng.integers(0, 256, (48, 64, 3), dtype=np.uint8)).save(
        tmp_path / "i.jpg", format="PNG"
    )
    raw = np.zeros((48, 64), dtype=np.uint16)
    raw[12:30, 20:44] = rng.integers(500, 900, (18, 24))
    Image.fromarray(raw).save(tmp_path / "d.png")
    anno = {"image_size": [96, 128], "camera": {"focal_length": 150.0}}
    K = ((150.0, 0.0, 64.0), (0.0, 150.0, 48.0), (0.0, 0.0, 1.0))
    view = loading.navi_view(tmp_path / "i.jpg", tmp_path / "d.png", K, size=32)
    image, depth, xyz, final_K = probe3d_navi_single(
        tmp_path / "i.jpg", tmp_path / "d.png", anno, 32, cv2
    )
    assert view.image.shape == (3, 32, 32) and view.xyz.shape == (3, 32, 32)
    torch.testing.assert_close(view.image, image)
    torch.testing.assert_close(view.depth, depth)
    torch.testing.assert_close(view.xyz, xyz)
    torch.testing.assert_close(view.K, final_K)
    # the crop is around the object: its depth covers every row and some pixel of each border
    assert (view.depth > 0).any(dim=2).all() or (view.depth > 0).any(dim=1).all()
    # known answer: a pixel's z is its depth, metres = 65535 * 10 / raw / 1000
    torch.testing.assert_close(view.xyz[2], view.depth[0])
    metres = 65535 * 10 / raw[raw > 0].astype(np.float64) / 1000
    values = view.depth[view.depth > 0].double().numpy()
    assert np.abs(values[:, None] - metres[None]).min(axis=1).max() < 1e-6


# ---------------------------------------------------------------------------------------------
# synthetic releases


def test_synthetic_scannet_round_trips_and_is_byte_identical(tmp_path):
    first = synthetic.write_scannet(tmp_path / "a")
    second = synthetic.write_scannet(tmp_path / "b")
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    assert all((first / f).read_bytes() == (second / f).read_bytes() for f in files)
    pair_list = kinds.read_release("scannet-1500", first)
    assert pair_list.header.synthetic
    pairs.write(tmp_path / "pairs.json", pair_list)
    assert pairs.read(tmp_path / "pairs.json") == pair_list
    assert [p.rotation_deg for p in pair_list.pairs] == pytest.approx(synthetic.SCANNET_ANGLES)
    bins = np.digitize([p.rotation_deg for p in pair_list.pairs], [15, 30, 60])
    assert set(bins) == {0, 1, 2, 3}  # every Probe3D rotation bin holds a pair


def test_synthetic_scannet_pixels_reprojected_with_depth_and_Rt_01_meet_their_world_points(
    tmp_path,
):
    root = synthetic.write_scannet(tmp_path / "s")
    pair_list = kinds.read_release("scannet-1500", root)
    scenes = {sid: (scene, cams) for sid, scene, cams, _ in synthetic.scannet_scenes()}
    for pair in pair_list.pairs:
        scene_id = pair.images[0].split("/")[0]
        scene, cameras = scenes[scene_id]
        frames = [int(Path(p).stem) for p in pair.images]
        cam0, cam1 = cameras[frames[0]], cameras[frames[1]]
        loaded = loading.scannet_pair(pair, root)
        depth0 = loaded.depths[0][0].numpy().astype(float)
        K = loaded.K.numpy().astype(float)
        Rt = np.asarray(pair.Rt_01)
        world0, _, _ = synthetic.world_points(scene, cam0)
        world1, true_depth1, _ = synthetic.world_points(scene, cam1)
        v, u = np.nonzero(depth0 > 0)
        rays = np.stack([u + 0.5, v + 0.5, np.ones_like(u)], axis=0).astype(float)
        points0 = np.linalg.inv(K) @ rays * depth0[v, u]
        points1 = Rt[:3, :3] @ points0 + Rt[:3, 3:]
        uv1 = (K @ points1)[:2] / points1[2]
        # where the true world point of each view-0 pixel lies in view 1 (pose 1 from the scene)
        truth = np.linalg.inv(cam1.pose) @ np.vstack([world0[v, u].T, np.ones(len(u))])
        truth_uv1 = (K @ truth[:3])[:2] / truth[2]
        assert np.abs(uv1 - truth_uv1).max() < 1.0
        # the view-1 pixel it lands on sees the same world point where it is unoccluded
        col, row = np.floor(uv1).astype(int)
        inside = (col >= 0) & (col < 160) & (row >= 0) & (row < 120)
        col, row, z1, idx = col[inside], row[inside], points1[2][inside], np.nonzero(inside)[0]
        seen = np.abs(true_depth1[row, col] - z1) < 0.02
        assert seen.mean() > 0.5
        gap = np.linalg.norm(
            world1[row[seen], col[seen]] - world0[v[idx[seen]], u[idx[seen]]], axis=1
        )
        footprint = z1[seen] / K[0, 0]  # metres per pixel at that depth, facing the camera
        # within the landed pixel's footprint (more on surfaces seen obliquely); an occluded or
        # wrong pixel would be centimetres to metres away
        assert np.median(gap / footprint) < 1.0
        assert np.all(gap < 3 * footprint)


def test_synthetic_spair_round_trips_through_the_reader(tmp_path):
    root = synthetic.write_spair(tmp_path / "spair")
    pair_list = kinds.read_release("spair-71k", root)
    assert pair_list.header.synthetic
    assert {p.category for p in pair_list.pairs} == set(synthetic.SPAIR_CLASSES)
    assert {p.viewpoint_variation for p in pair_list.pairs} == {0, 1, 2}
    assert len(pair_list.pairs) == 2 * 6  # every pair of 4 views, two classes
    for pair in pair_list.pairs:
        left, top, right, bottom = pair.target_box
        assert pair.threshold_scale == pytest.approx(max(right - left, bottom - top) / 160)
    # keypoint i is box corner i projected with the camera, present where the segment from the
    # camera to the corner runs through no point inside the box (sampled, not ray-cast)
    size = (120, 160)
    for c, (category, box) in enumerate(sorted(synthetic.SPAIR_CLASSES.items())):
        K = synthetic.intrinsics(size, focal=size[1] * 0.9)
        pose = synthetic.orbit_pose(10.0, 30.0, 1.8, (0, 0, box[2] / 2))
        pair = next(
            p
            for p in pair_list.pairs
            if p.category == category and p.images[0].endswith("_000000.jpg")
        )
        corners = np.array(
            [
                (sx * box[0], sy * box[1], z)
                for z in (0.0, box[2])
                for sy in (-1, 1)
                for sx in (-1, 1)
            ]
        )
        in_camera = (np.linalg.inv(pose) @ np.c_[corners, np.ones(8)].T)[:3]
        uv = (K @ in_camera)[:2] / in_camera[2]
        shown = 0
        for i, xy in enumerate(pair.keypoints[0]):
            steps = np.linspace(0, 0.999, 5000)[:, None]
            segment = pose[:3, 3] + steps * (corners[i] - pose[:3, 3])
            inside = (np.abs(segment[:, :2]) < np.array(box[:2]) - 1e-9).all(axis=1) & (
                (segment[:, 2] > 1e-9) & (segment[:, 2] < box[2] - 1e-9)
            )
            if not inside.any():
                assert xy == pytest.approx(tuple(uv[:, i]), abs=1e-3)
                shown += 1
            else:
                assert xy is None
        assert 4 <= shown < 8
