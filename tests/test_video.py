"""The video suite: pm-k known answers, the ImageNet-Vid-Robust kind on stand-in frames named as in
the real metadata (skipped without ../shared/data), the evaluation step on a hand-made project, bad
input named."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from vlstress.errors import VlstressError
from vlstress.suites.video.pmk import anchor_outcomes, pm_k

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "video-robust"
VID_META = SHARED / "imagenet-vid-robust"


def _frames(anchor: str, offsets_right: dict[int, bool], labels=(0,)) -> list[dict]:
    return [
        {"anchor": anchor, "offset": offset, "labels": list(labels), "right": right}
        for offset, right in offsets_right.items()
    ]


def test_pm_k_known_answers():
    entries = (
        _frames("a", {0: True, -1: True, 1: True, 2: True, -3: True})  # right everywhere
        + _frames("b", {0: True, 1: True, -2: False, 3: True})  # breaks at distance 2
        + _frames("c", {0: False, 1: True})  # anchor wrong: never counts
        + _frames("d", {0: True, 1: False})  # breaks at distance 1
    )
    predicted = [0 if e["right"] else 1 for e in entries]
    assert pm_k(entries, predicted, 3) == pytest.approx([75.0, 50.0, 25.0, 25.0])
    # the per-anchor outcomes: each pm-k the mean of its column
    found = anchor_outcomes(entries, predicted, 3)
    assert [found.column(f"pm{k}").tolist() for k in range(4)] == [
        [True, True, False, True],
        [True, True, False, False],
        [True, False, False, False],
        [True, False, False, False],
    ]
    # a frame with several labels is right on any of them
    two = _frames("e", {0: True}, labels=(4, 2))
    assert pm_k(two, [2], 0) == [100.0] and pm_k(two, [3], 0) == [0.0]


def test_pm_k_refuses_bad_input():
    with pytest.raises(VlstressError, match="anchor\\(s\\) without their own frame, e.g. a"):
        pm_k(_frames("a", {1: True}), [0], 1)
    with pytest.raises(VlstressError, match="2 predictions for 1 frames"):
        pm_k(_frames("a", {0: True}), [0, 0], 1)
    with pytest.raises(VlstressError, match="no anchors"):
        pm_k([], [], 1)


# ------------------------------------------------------------------ the kind, on stand-in frames


def stand_in(root: Path, n_anchors: int = 3) -> tuple[Path, Path, dict]:
    """The first anchors of the real metadata, with tiny JPEG frames named as it names them."""
    if not (VID_META / "pmsets.json").is_file():
        pytest.skip("../shared/data/video-robust is not here")
    pmsets = json.loads((VID_META / "pmsets.json").read_text())
    labels = json.loads((VID_META / "labels.json").read_text())
    chosen = {a: pmsets[a] for a in sorted(pmsets)[:n_anchors]}
    meta = root / "metadata"
    meta.mkdir(parents=True)
    (meta / "pmsets.json").write_text(json.dumps(chosen))
    frames = {f for a, ns in chosen.items() for f in (a, *ns)}
    (meta / "labels.json").write_text(json.dumps({f: labels[f] for f in frames}))
    (meta / "rev_class_idx_map.json").write_text((VID_META / "rev_class_idx_map.json").read_text())
    for i, frame in enumerate(sorted(frames)):
        path = root / "frames" / frame
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (16, 12), (i * 7 % 256, 80, 160)).save(path, format="JPEG")
    return root / "frames", meta, chosen


def _build(frames: Path, meta: Path | None, **kw):
    from vlstress.testsets.kinds import Options, build

    return build("imagenet-vid-robust", "vid", Options(root=frames, annotations=meta, **kw))


def test_the_kind_reads_the_metadata_and_the_frames(tmp_path):
    from vlstress.testsets.video_kinds import VID_CLASSES

    frames, meta, chosen = stand_in(tmp_path)
    data = _build(frames, meta)
    assert data.classes == list(VID_CLASSES) and len(data.class_ids) == 30
    assert len(data.images) == sum(1 + len(ns) for ns in chosen.values())
    anchors = [e for e in data.images if e["offset"] == 0]
    assert [e["path"] for e in anchors] == sorted(chosen)
    assert all(e["path"] == e["anchor"] for e in anchors)
    offsets = {e["offset"] for e in data.images}
    assert offsets <= set(range(-10, 11)) and min(offsets) < 0 < max(offsets)
    assert all(e["label"] == e["labels"][0] for e in data.images)
    assert data.source["imagenet_indices"]["0"] == [404]  # airplane: ImageNet's airliner
    # one anchor per class at most: the stand-in's anchors are of distinct or equal classes
    first = _build(frames, meta, max_per_class=1)
    kept = {e["anchor"] for e in first.images}
    assert len(kept) == len({e["label"] for e in anchors})


def test_missing_frames_and_metadata_are_named(tmp_path):
    frames, meta, chosen = stand_in(tmp_path)
    victim = frames / sorted(chosen)[1]
    victim.unlink()
    with pytest.raises(VlstressError, match=r"1 of \d+ frames named in .*pmsets.json are missing"):
        _build(frames, meta)
    with pytest.raises(VlstressError, match="needs --annotations"):
        _build(frames, None)
    (meta / "labels.json").unlink()
    with pytest.raises(VlstressError, match="has no labels.json"):
        _build(frames, meta)


# ------------------------------------------------------------------ the evaluation step


def _meta() -> dict:
    model = {"slug": "m", "arch": "X", "weights_label": "random-init (seed 0)"}
    return {"provenance": {"model": model, "seed": 0, "device": "cpu"}}


def test_evaluate_video_scores_a_hand_made_project(tmp_path, monkeypatch):
    import yaml

    from vlstress.io import sidecar, write_json, write_npy
    from vlstress.record import read_records
    from vlstress.suites.video.commands import evaluate_video
    from vlstress.testsets import manifest as testsets

    from conftest import REPO

    monkeypatch.chdir(tmp_path)
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    entry = dict(params["zeroshot"]["testsets"]["objects"])
    params["zeroshot"]["testsets"]["vid"] = {**entry, "kind": "imagenet-vid-robust"}
    params["suites"]["video"] = True
    params["video"] = {"testsets": ["vid"], "k": 2}
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    classes = ["a", "b", "c"]
    # anchor x: right, neighbours right at 1, wrong at -2; anchor y: wrong; anchor z: all right
    rows = [
        ("x", 0, [0], 0), ("x", 1, [0], 0), ("x", -2, [0], 2),
        ("y", 0, [1], 0), ("y", 1, [1], 1),
        ("z", 0, [2], 2), ("z", -1, [2, 0], 0), ("z", 2, [2], 2),
    ]  # fmt: skip
    images = [
        {"path": f"{a}{o}.jpg", "label": ls[0], "labels": ls, "anchor": a, "offset": o}
        for a, o, ls, _ in rows
    ]
    folder = tmp_path / "data/testsets/vid"
    testsets.write(
        folder / "manifest.json",
        testsets.ClassificationSet(
            "vid", "imagenet-vid-robust", classes, classes, str(folder), images
        ),
    )
    emb = tmp_path / "results/embeddings/m/zeroshot/testsets/vid.npy"
    write_npy(emb, np.eye(3, dtype=np.float32)[[p for *_, p in rows]])
    write_json(sidecar(emb), _meta())
    clf = tmp_path / "results/embeddings/m/classifiers/vid.npy"
    write_npy(clf, np.eye(3, dtype=np.float32))
    write_json(sidecar(clf), {**_meta(), "classes": classes, "templates_source": "single"})
    parser = argparse.ArgumentParser()
    evaluate_video.add_arguments(parser)
    evaluate_video.run(
        parser.parse_args(["--params", "params.yaml", "--model", "m", "--k", "2", "--out", "o"])
    )
    (record,) = read_records(tmp_path / "o")
    assert record.task == "video" and record.condition == {"set": "vid"}
    m = record.metrics
    assert (m["pm0"], m["pm1"], m["pm2"]) == pytest.approx((200 / 3, 200 / 3, 100 / 3))
    assert m["drop"] == pytest.approx(100 / 3)
    assert record.dataset["n_images"] == 3 and record.dataset["n_frames"] == 8
    # per anchor (x, y, z) whether it counts for each pm-k, beside the record
    from vlstress.outcomes import read_outcomes

    (block,) = read_outcomes(tmp_path / "o.outcomes.npz")
    assert block.unit == "anchor" and block.n == 3
    assert [block.column(f"pm{k}").tolist() for k in range(3)] == [
        [True, False, True],
        [True, False, True],
        [False, False, True],
    ]


def test_params_name_a_test_set_that_is_no_video_set():
    import yaml

    from vlstress.suites.video.params import problems

    from conftest import REPO

    params = yaml.safe_load((REPO / "params.yaml").read_text())
    on = frozenset({"zeroshot", "video"})
    params["video"] = {"testsets": ["objects", "vdi"], "k": 10}
    found = problems(params, on)
    assert any("'objects' is of kind 'demo-objects', not a video kind" in p for p in found)
    assert any("unknown test set 'vdi'" in p for p in found)


# ------------------------------------------------------------------ YTBB-Robust

YTBB_META = SHARED / "ytbb-robust"


def ytbb_stand_in(root: Path) -> tuple[Path, Path, list[str]]:
    """The real class index and label csv, the first 8 rows of the real anchor review; a stand-in
    pair review (the real pmk_labels.json is not in ../shared/data) of the first three good
    anchors; tiny frames for every anchor and reviewed neighbour."""
    if not (YTBB_META / "anchor_labels.json").is_file():
        pytest.skip("../shared/data/video-robust is not here")
    import shutil

    meta = root / "metadata"
    meta.mkdir(parents=True)
    for name in ("ytbb_robustness_test_anchors_full.csv", "ytbb_class_index.json"):
        shutil.copy(YTBB_META / name, meta / name)
    review = json.loads((YTBB_META / "anchor_labels.json").read_text())
    review["annotations"] = review["annotations"][:8]
    (meta / "anchor_labels.json").write_text(json.dumps(review))
    good = [
        row["key"]
        for row in review["annotations"]
        if 0 in row["labels"] and not {1, 2} & set(row["labels"])
    ][:3]
    assert len(good) == 3
    labels = ["similar", "dissimilar", "bad-anchor", "correct", "blur-increase"]
    rows = []
    for anchor in good:
        parent, name = anchor.split("/")
        frame = int(name.split("-")[1].split(".")[0])
        for offset, marks in ((-2, [0]), (1, [0, 3]), (3, [1]), (5, [0, 4])):
            rows.append({"key": f"{anchor},{parent}/frame-{frame + offset}.jpg", "labels": marks})
    rows.append({"key": f"{good[2]},{good[2]}", "labels": [2]})  # the third anchor is bad
    (meta / "pmk_labels.json").write_text(json.dumps({"labels": labels, "annotations": rows}))
    frames = root / "frames"
    keys = [row["key"] for row in review["annotations"]]
    keys += [key for row in rows for key in row["key"].split(",")]
    for key in keys:
        path = frames / key
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (16, 12), (40, 90, 140)).save(path, format="JPEG")
    return frames, meta, good


def test_the_ytbb_kind_keeps_the_reviewed_anchors_and_similar_neighbours(tmp_path):
    from vlstress.testsets.kinds import Options, build

    frames, meta, good = ytbb_stand_in(tmp_path)
    data = build("ytbb-robust", "ytbb", Options(root=frames, annotations=meta))
    assert len(data.classes) == 24 and data.classes[0] == "person"
    anchors = [e for e in data.images if e["offset"] == 0]
    # the review's good anchors but the one the pair review calls a bad anchor
    review = json.loads((meta / "anchor_labels.json").read_text())["annotations"]
    kept = [
        row["key"]
        for row in review
        if 0 in row["labels"] and not {1, 2} & set(row["labels"]) and row["key"] != good[2]
    ]
    assert [e["path"] for e in anchors] == sorted(kept) and len(kept) < len(review)
    for anchor in anchors:
        offsets = sorted(e["offset"] for e in data.images if e["anchor"] == anchor["path"])
        # -2 and 1 are similar; 3 is dissimilar; 5 is similar but blur-increased; the anchors
        # without a reviewed pair have no neighbours
        assert offsets == ([-2, 0, 1] if anchor["path"] in good else [0])
    # labels: the csv's YTBB label (22/23 swapped as the testbed reads it) and the review's classes
    rows = {
        r["key"]: r for r in json.loads((meta / "anchor_labels.json").read_text())["annotations"]
    }
    names = json.loads((meta / "anchor_labels.json").read_text())["labels"]
    for anchor in anchors:
        added = {
            data.classes.index(names[i])
            for i in rows[anchor["path"]]["labels"]
            if names[i] in data.classes
        }
        assert added <= set(anchor["labels"]) and len(anchor["labels"]) >= 1
    neighbours = [e for e in data.images if e["offset"] != 0]
    assert all(
        e["labels"] == next(a["labels"] for a in anchors if a["path"] == e["anchor"])
        for e in neighbours
    )
    (frames / neighbours[0]["path"]).unlink()
    with pytest.raises(VlstressError, match=r"1 of \d+ frames named in .* are missing"):
        build("ytbb-robust", "ytbb", Options(root=frames, annotations=meta))
    (meta / "pmk_labels.json").unlink()
    with pytest.raises(VlstressError, match="has no pmk_labels.json"):
        build("ytbb-robust", "ytbb", Options(root=frames, annotations=meta))
