"""The overlap suite: faiss neighbours against brute force, the threshold calibration, the training
collection kinds (folder, shards, embeddings), recall on planted duplicates of test images, the
subset accuracies, bad input named."""

from __future__ import annotations

import io
import json
import tarfile
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from vlstress.errors import VlstressError
from vlstress.suites.overlap import collection, detect, embedding_file, evaluation, neighbours

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
    sims, rows = neighbours.nearest(flat, queries, train)
    assert kind == "flat" and np.array_equal(rows, truth)
    assert np.allclose(sims, (queries * train[truth]).sum(axis=1), atol=1e-5)
    # IVF searching every list is exact; with one list of 8 most queries still find theirs
    ivf, kind = neighbours.build_index(train, "ivf", nlist=8, nprobe=8, seed=0)
    assert kind == "ivf" and np.array_equal(neighbours.nearest(ivf, queries, train)[1], truth)
    ivf.nprobe = 1
    assert np.mean(neighbours.nearest(ivf, queries, train)[1] == truth) >= 0.9
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


# --------------------------------------------------------------------------- the same on any CPU


def exact_cosine(a: np.ndarray, b: np.ndarray) -> Fraction:
    """The inner product of two float32 vectors in exact rational arithmetic."""
    return sum((Fraction(float(x)) * Fraction(float(y)) for x, y in zip(a, b)), Fraction(0))


def test_a_similarity_is_the_exact_cosine_rounded_to_5_decimals():
    rng = np.random.default_rng(3)
    train = unit(rng.standard_normal((30, 64)))
    queries = unit(train[:12] + 0.2 * rng.standard_normal((12, 64)))
    index, _ = neighbours.build_index(train, "flat", nlist=1, nprobe=1, seed=0)
    sims, rows = neighbours.nearest(index, queries, train)
    for q, sim, row in zip(queries, sims, rows):
        exact = [exact_cosine(q, t) for t in train]
        assert row == int(np.argmax([float(e) for e in exact]))
        assert sim == round(float(exact[row]), 5)  # correctly rounded, then 5 places
    assert neighbours.cosine(queries[0], train[0]) == float(exact_cosine(queries[0], train[0]))


class Nudged:
    """A faiss index whose similarities come out a few float32 ulps off, as another CPU's kernels
    (another summation order) give them: the rows it proposes are the same."""

    def __init__(self, index, steps: int):
        self.index, self.steps, self.ntotal = index, steps, index.ntotal

    def search(self, queries, k):
        sims, rows = self.index.search(queries, k)
        for _ in range(abs(self.steps)):
            sims = np.nextafter(sims, np.float32(np.inf if self.steps > 0 else -np.inf))
        return sims, rows


@pytest.mark.parametrize("steps", [1, -2])
def test_detection_does_not_depend_on_the_last_bits_of_faiss(tmp_path, monkeypatch, steps):
    """The similarities, flags and the calibrated threshold written are the same when faiss's
    sums come out a few ulps off (they did on another CPU: 0.969258 against 0.969257)."""
    train_dir = tmp_path / "train"
    _photos(train_dir, 30, seed=1)
    tests = _photos(tmp_path / "test", 10, seed=2)
    body = collection.build("folder", train_dir, None, planted=8, seed=0, out=tmp_path / "c")

    def run():
        return detect.detect(
            body, tiny_embed, {"toy": tiny_embed(tests)}, index_kind="flat", nlist=1, nprobe=1,
            threshold=None, recall=0.9, seed=0,
        )  # fmt: skip

    here = run()
    build = neighbours.build_index
    monkeypatch.setattr(
        neighbours,
        "build_index",
        lambda *a, **k: (Nudged(build(*a, **k)[0], steps), build(*a, **k)[1]),
    )
    assert run() == here
    # what is written: 5 decimals, the flag the written similarity against the written threshold
    found = here["testsets"]["toy"]
    assert all(s == round(s, 5) for s in found["similarity"]) and here["threshold"] == round(
        here["threshold"], 5
    )
    assert found["flagged"] == [s >= here["threshold"] for s in found["similarity"]]


# --------------------------------------------------------------------------- embedding files


def _npy(path: Path, array) -> Path:
    np.save(path, array)
    return path


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: (p.write_bytes(b""), p)[1], r"empty \(0 bytes\): expected a .npy file"),
        (lambda p: (p.write_text("a,b\n1,2\n"), p)[1], "not a .npy file"),
        (lambda p: _npy(p, np.ones((3, 8), np.int64)), "dtype int64: expected floats"),
        (lambda p: _npy(p, np.ones(8, np.float32)), r"shape \(8,\): expected rows x width"),
        (lambda p: _npy(p, np.ones((0, 8), np.float32)), r"no rows \(shape \(0, 8\)\)"),
        (lambda p: _npy(p, unit(np.ones((3, 6)))), "width 6; the detector's embeddings have 8"),
    ],
)
def test_a_bad_embedding_file_is_named_by_the_collection_and_the_detection(tmp_path, make, message):
    path = make(tmp_path / "emb.npy")
    with pytest.raises(VlstressError, match=f"training embeddings {path} .*{message}"):
        embedding_file.header(path, width=8)
    body = {"kind": "embeddings", "embeddings": str(path), "images": [], "planted": []}
    with pytest.raises(VlstressError, match=f"training embeddings {path} "):
        detect.detect(body, None, {"toy": unit(np.ones((2, 8)))}, index_kind="flat", nlist=1,
                      nprobe=1, threshold=0.9, recall=0.9, seed=0)  # fmt: skip
    if "width" not in message:  # the collection step does not know the detector's width
        with pytest.raises(VlstressError, match=f"training embeddings {path} .*{message}"):
            collection.build("embeddings", path, None, planted=2, seed=0, out=tmp_path / "c")
        assert not (tmp_path / "c").exists()


def test_a_truncated_embedding_file_is_named(tmp_path):
    path = _npy(tmp_path / "emb.npy", unit(np.ones((4, 8))))
    path.write_bytes(path.read_bytes()[:-10])
    assert embedding_file.header(path)[0] == (4, 8)  # the header alone is fine
    with pytest.raises(VlstressError, match=f"training embeddings {path} are truncated"):
        embedding_file.load(path)


def test_the_params_check_reads_the_embedding_file_header(tmp_path, monkeypatch):
    """Before any step: the header of `overlap.train.path` against the detector's width (its
    open_clip config's embed_dim, read without importing open_clip)."""
    import yaml

    from vlstress.suites.overlap.params import open_clip_width, problems

    from conftest import REPO

    pytest.importorskip("open_clip")  # its model configs
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    on = frozenset({"zeroshot", "overlap"})
    arch = params["models"][params["overlap"]["detector"]]["arch"]
    width = open_clip_width(arch)
    assert isinstance(width, int) and width > 0
    assert open_clip_width("no-such-arch") is None
    params["overlap"]["threshold"] = 0.9
    params["overlap"]["train"] = {"kind": "embeddings", "path": "emb.npy", "max_images": None}
    monkeypatch.chdir(tmp_path)
    assert problems(params, on) == []  # not there yet: a step may write it
    Path("emb.npy").write_bytes(b"")
    assert problems(params, on) == [
        "overlap.train.path: training embeddings emb.npy are empty (0 bytes): expected a .npy file"
    ]
    _npy(tmp_path / "emb.npy", unit(np.ones((3, width + 1))))
    (found,) = problems(params, on)
    assert f"width {width + 1}; the detector's embeddings have {width} dimensions" in found
    _npy(tmp_path / "emb.npy", np.ones((0, width), np.float32))
    assert "no rows" in problems(params, on)[0]
    _npy(tmp_path / "emb.npy", unit(np.ones((3, width))))
    assert problems(params, on) == []


def test_the_table_gives_wilson_intervals_and_newcombes_gap():
    """Known counts (3 of 10 flagged images right, 12 of 20 clean ones): each top-1 carries
    statsmodels' Wilson interval over its subset's n, the gap Newcombe's interval computed by hand
    from those two Wilson intervals."""
    import pandas as pd
    from statsmodels.stats.proportion import proportion_confint

    from vlstress.suites.overlap.table import overlap_table

    metrics = {"top1_overlap": 30.0, "n_overlap": 10, "top1_clean_subset": 60.0,
               "n_clean_subset": 20, "gap": -30.0}  # fmt: skip
    agg = pd.DataFrame(
        [
            {
                "model": "m",
                "label": "RN50",
                "task": "overlap",
                "metric": metric,
                "mean": value,
                "condition_json": json.dumps({"set": "objects"}),
            }  # fmt: skip
            for metric, value in metrics.items()
        ]
    )
    frame = overlap_table(agg)
    row = frame.loc["RN50"]
    l1, u1 = proportion_confint(3, 10, method="wilson")
    l2, u2 = proportion_confint(12, 20, method="wilson")
    assert row["objects overlap"] == f"30.0 [{100 * l1:.1f}, {100 * u1:.1f}]"
    assert row["objects clean"] == f"60.0 [{100 * l2:.1f}, {100 * u2:.1f}]"
    assert (row["objects n overlap"], row["objects n clean"]) == ("10", "20")
    low = -0.3 - np.hypot(0.3 - l1, u2 - 0.6)
    high = -0.3 + np.hypot(u1 - 0.3, 0.6 - l2)
    assert row["objects gap"] == f"-30.0 [{100 * low:.1f}, {100 * high:.1f}]"


def test_outcomes_give_the_clean_top1_and_pair_two_models_on_the_clean_images():
    """The outcomes keep each image's subset: the clean images' mean correctness is the record's
    top1_clean_subset, and the paired comparison of two models runs McNemar on those images only
    (the flagged ones left out)."""
    from vlstress.suites.findings.comparisons import comparison_table

    rng = np.random.default_rng(4)
    labels = rng.integers(0, 5, 40)
    flagged = np.arange(40) < 12
    better = rng.random(40) < 0.9
    worse = rng.random(40) < 0.3
    blocks = {
        name: evaluation.image_outcomes(correct, flagged, labels)
        for name, correct in (("a", better), ("b", worse))
    }
    clean = blocks["a"].column("subset") == "clean"
    assert clean.sum() == 28 and set(blocks["a"].column("subset")[:12]) == {"overlap"}
    metrics = evaluation.subset_metrics(better, flagged)
    assert 100 * blocks["a"].column("correct")[clean].mean() == pytest.approx(
        metrics["top1_clean_subset"]
    )
    table = comparison_table(
        {(m, "objects", "overlap", "set=objects"): [b] for m, b in blocks.items()}
    )
    (row,) = table.itertuples(index=False)
    assert row.test == "McNemar exact" and row.n == 28
    assert row.value_a == pytest.approx(metrics["top1_clean_subset"])
    assert row.a_only == int(np.sum(better[~flagged] & ~worse[~flagged]))
