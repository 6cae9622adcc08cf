"""The overlap suite: faiss neighbours against brute force, the threshold calibration, the training
collection kinds (folder, shards, embeddings), recall on planted duplicates of test images, the
subset accuracies, bad input named."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from vlstress.errors import VlstressError
from vlstress.suites.overlap import collection, detect, evaluation, neighbours

pytest.importorskip("faiss")


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def test_flat_and_ivf_find_the_brute_force_neighbour():
    rng = np.random.default_rng(0)
    centres = unit(rng.standard_normal((20, 16)))
    train = unit(np.repeat(centres, 50, axis=0) + 0.05 * rng.standard_normal((1000, 16)))
    queries = unit(train[rng.choice(1000, 40)] + 0.01 * rng.standard_normal((40, 16)))
    truth = (queries @ train.T).argmax(axis=1)
    flat, kind = neighbours.build_index(train, "flat", nlist=8, nprobe=8, seed=0)
    sims, rows = neighbours.nearest(flat, queries)
    assert kind == "flat" and np.array_equal(rows, truth)
    assert np.allclose(sims, (queries * train[truth]).sum(axis=1), atol=1e-5)
    # IVF searching every list is exact; with one list of 8 most queries still find theirs
    ivf, kind = neighbours.build_index(train, "ivf", nlist=8, nprobe=8, seed=0)
    assert kind == "ivf" and np.array_equal(neighbours.nearest(ivf, queries)[1], truth)
    ivf.nprobe = 1
    assert np.mean(neighbours.nearest(ivf, queries)[1] == truth) >= 0.9
    assert neighbours.build_index(train, "auto", nlist=8, nprobe=1, seed=0)[1] == "flat"
    with pytest.raises(VlstressError, match="unknown faiss index 'hnsw'"):
        neighbours.build_index(train, "hnsw", nlist=8, nprobe=1, seed=0)
    with pytest.raises(VlstressError, match="no embeddings to index"):
        neighbours.build_index(np.zeros((0, 16), np.float32), "flat", nlist=8, nprobe=1, seed=0)


def test_calibration_known_answer():
    similarity = np.array([0.99, 0.97, 0.95, 0.90, 0.80, 0.99])
    neighbour = np.array([0, 1, 2, 3, 4, 9])  # the last one's nearest is not its original
    original = np.array([0, 1, 2, 3, 4, 5])
    transforms = ["resized", "cropped"] * 3
    found = neighbours.calibrate(similarity, neighbour, original, transforms, recall=0.5)
    # 3 of 6 kept: the 3rd best similarity of the hits
    assert found.threshold == pytest.approx(0.95) and found.recall == pytest.approx(0.5)
    assert found.found == pytest.approx(5 / 6) and found.n_planted == 6
    assert found.per_transform == {"cropped": pytest.approx(1 / 3), "resized": pytest.approx(2 / 3)}
    with pytest.raises(VlstressError, match="only 5 of 6 planted duplicates.*no threshold keeps"):
        neighbours.calibrate(similarity, neighbour, original, transforms, recall=1.0)


def _photos(folder: Path, n: int, seed: int = 0) -> list[Path]:
    """Distinct smooth random pictures (a near-duplicate of one is closer to it than to others)."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        small = rng.integers(0, 256, (6, 8, 3), dtype=np.uint8)
        image = Image.fromarray(small).resize((96, 72), Image.BICUBIC)
        path = folder / f"img{i:03d}.png"
        image.save(path)
        paths.append(path)
    return paths


def tiny_embed(paths) -> np.ndarray:
    """A stand-in detector: the centred 12 x 12 colour thumbnail, L2-normalised."""
    rows = []
    for path in paths:
        with Image.open(path) as image:
            thumb = np.asarray(image.convert("RGB").resize((12, 12), Image.BILINEAR), float)
        rows.append((thumb - thumb.mean()).ravel())
    return unit(np.array(rows))


def test_planted_duplicates_of_test_images_are_found(tmp_path):
    """Copies of some test images (resized, re-encoded, cropped) hidden in the training folder:
    the calibrated threshold flags those test images and few others."""
    train_dir = tmp_path / "train"
    _photos(train_dir, 40, seed=1)
    tests = _photos(tmp_path / "test", 12, seed=2)
    planted_rows = [0, 3, 5, 8]
    for row, transform in zip(planted_rows, ["resized", "reencoded", "cropped", "resized"]):
        copy = collection.planted_copy(Image.open(tests[row]).convert("RGB"), transform)
        copy.save(train_dir / f"zz_copy_of_test{row}.png")
    body = collection.build("folder", train_dir, None, planted=10, seed=0, out=tmp_path / "c")
    assert len(body["images"]) == 44 and len(body["planted"]) == 30
    result = detect.detect(
        body, tiny_embed, {"toy": tiny_embed(tests)}, index_kind="auto", nlist=4, nprobe=4,
        threshold=None, recall=0.9, seed=0,
    )  # fmt: skip
    flags = np.array(result["testsets"]["toy"]["flagged"])
    assert flags[planted_rows].all()  # recall 1 on the planted test duplicates
    assert flags.sum() <= len(planted_rows) + 1
    assert (
        result["calibration"]["recall"] >= 0.9 and result["threshold_from"] == "planted duplicates"
    )
    nearest = result["testsets"]["toy"]["nearest"]
    assert all(
        Path(body["images"][nearest[r]]).name == f"zz_copy_of_test{r}.png" for r in planted_rows
    )
    # a given threshold is taken as is
    given = detect.detect(
        body, tiny_embed, {"toy": tiny_embed(tests)}, index_kind="flat", nlist=4, nprobe=4,
        threshold=0.999999, recall=0.9, seed=0,
    )  # fmt: skip
    assert given["threshold_from"] == "params" and sum(given["testsets"]["toy"]["flagged"]) == 0


def test_shards_and_embedding_files(tmp_path):
    photos = _photos(tmp_path / "src", 5)
    shard = tmp_path / "shards" / "00000.tar"
    shard.parent.mkdir()
    with tarfile.open(shard, "w") as tar:
        for path in photos:
            tar.add(path, arcname=f"sample{path.stem}.png")
        info = tarfile.TarInfo("sample0.txt")
        text = b"a caption"
        info.size = len(text)
        tar.addfile(info, io.BytesIO(text))
    (tmp_path / "shards.txt").write_text("shards/00000.tar\n")
    body = collection.build(
        "shards", tmp_path / "shards.txt", 4, planted=2, seed=0, out=tmp_path / "c"
    )
    assert len(body["images"]) == 4 and all(Path(p).is_file() for p in body["images"])
    assert all(p.endswith(".png") for p in body["images"])  # the caption member is skipped
    # a user's embedding file: checked, no images planted
    np.save(tmp_path / "emb.npy", tiny_embed(photos))
    emb = collection.build(
        "embeddings", tmp_path / "emb.npy", None, planted=2, seed=0, out=tmp_path / "e"
    )
    assert emb["images"] == [] and emb["planted"] == []
    assert detect.training_embeddings(emb, None).shape == (5, 432)
    np.save(tmp_path / "raw.npy", np.ones((3, 4), np.float32))
    raw = {**emb, "embeddings": str(tmp_path / "raw.npy")}
    with pytest.raises(VlstressError, match="not L2-normalised"):
        detect.training_embeddings(raw, None)
    with pytest.raises(VlstressError, match="no threshold given and no planted duplicates"):
        detect.detect(emb, None, {"toy": tiny_embed(photos)}, index_kind="flat", nlist=1,
                      nprobe=1, threshold=None, recall=0.9, seed=0)  # fmt: skip


def test_a_collection_without_images_is_named(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(
        VlstressError, match="training collection .*empty \\(folder\\) has no images"
    ):
        collection.build("folder", tmp_path / "empty", None, planted=2, seed=0, out=tmp_path / "o")
    assert not (tmp_path / "o").exists()
    with pytest.raises(VlstressError, match="training folder not found"):
        collection.build("folder", tmp_path / "none", None, planted=2, seed=0, out=tmp_path / "o")
    (tmp_path / "list.txt").write_text("missing.tar\n")
    with pytest.raises(VlstressError, match="shard .*missing.tar .* is unreadable"):
        collection.build(
            "shards", tmp_path / "list.txt", None, planted=2, seed=0, out=tmp_path / "o"
        )


def test_subset_metrics_known_answer():
    correct = np.array([True, False, True, True, False, True])
    flagged = np.array([True, True, False, False, False, True])
    m = evaluation.subset_metrics(correct, flagged)
    assert m["top1_overlap"] == pytest.approx(200 / 3) and m["top1_clean_subset"] == pytest.approx(
        200 / 3
    )
    assert m["gap"] == pytest.approx(0.0) and m["n_overlap"] == 3 and m["overlap_share"] == 50.0
    none = evaluation.subset_metrics(correct, np.zeros(6, bool))
    assert (
        none["top1_overlap"] is None
        and none["gap"] is None
        and none["top1"] == pytest.approx(400 / 6)
    )
    with pytest.raises(VlstressError, match="5 flags for 6 images"):
        evaluation.subset_metrics(correct, flagged[:5])


def test_params_problems_name_the_entry():
    import yaml

    from vlstress.suites.overlap.params import problems

    from conftest import REPO

    params = yaml.safe_load((REPO / "params.yaml").read_text())
    on = frozenset({"zeroshot", "overlap"})
    assert problems(params, on) == []
    params["overlap"].update(testsets=["objectz"], detector="vit-l-14")
    params["overlap"]["train"] = {"kind": "embeddings", "path": "x.npy", "max_images": None}
    found = problems(params, on)
    assert any("unknown test set 'objectz'" in p for p in found)
    assert any("overlap.detector: unknown model 'vit-l-14'" in p for p in found)
    assert any("give the threshold" in p for p in found)
    assert json.dumps(found)  # plain strings
