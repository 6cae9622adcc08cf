"""Per-query outcomes of the retrieval metrics: the items behind R@1, false R@1 and R@1_original
(retrieval_metrics.image_text_ranks / stress_ranks), and the outcomes file `vlstress evaluate`
writes beside its record."""

from __future__ import annotations

import json

import numpy as np
import pytest

from vlstress import retrieval_metrics as metrics
from vlstress.cli import main
from vlstress.outcomes import outcomes_path, read_outcomes


def tied_embeddings(seed: int, n_images: int, n_captions: int, n_extra: int = 0):
    """Small integer embeddings: many exact ties, so both tie policies matter."""
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 3, size=(n_images, 4)).astype(np.float32)
    texts = rng.integers(0, 3, size=(n_captions, 4)).astype(np.float32)
    extra = rng.integers(0, 3, size=(n_extra, 4)).astype(np.float32)
    owner = np.concatenate([np.arange(n_images), rng.integers(0, n_images, n_captions - n_images)])
    return images, texts, extra, owner


@pytest.mark.parametrize("ties", metrics.TIE_POLICIES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_image_text_outcomes_are_the_items_behind_recall(ties, seed):
    images, texts, _, owner = tied_embeddings(seed, 7, 16)
    ranked = metrics.image_text_ranks(images, texts, owner, ks=(1, 5), chunk_size=3, ties=ties)
    assert ranked.metrics == metrics.image_text_recalls(images, texts, owner, ks=(1, 5), ties=ties)
    columns = ranked.item_columns()
    assert columns["direction"].tolist() == ["i2t"] * 7 + ["t2i"] * 16
    assert columns["rank"].dtype == np.int32 and columns["hit1"].dtype == bool
    i2t = metrics.retrieval_ranks(
        images, texts, metrics.rows_by_owner(owner, 7), chunk_size=5, ties=ties
    )
    t2i = metrics.retrieval_ranks(texts, images, [[int(i)] for i in owner], ties=ties)
    assert columns["rank"].tolist() == (np.concatenate([i2t.ranks, t2i.ranks]) + 1).tolist()
    for direction in ("i2t", "t2i"):
        hit1 = columns["hit1"][columns["direction"] == direction]
        assert 100 * hit1.mean() == pytest.approx(ranked.metrics[f"{direction}_R@1"])
    assert np.array_equal(columns["hit1"], columns["rank"] == 1)


@pytest.mark.parametrize("ties", metrics.TIE_POLICIES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_stress_outcomes_are_the_items_behind_the_stress_metrics(ties, seed):
    images, texts, mixed, owner = tied_embeddings(seed, 6, 14, n_extra=6)
    gt = [[int(i)] for i in owner]
    ranked = metrics.stress_ranks(texts, images, gt, mixed, prefix="t2i", chunk_size=4, ties=ties)
    assert ranked.metrics == metrics.stress_recalls(
        texts, images, gt, mixed, prefix="t2i", ties=ties
    )
    columns = ranked.item_columns()
    assert set(columns) == {"rank", "hit1", "hit1_original", "false_top1"}
    stressed = metrics.retrieval_ranks(texts, np.concatenate([images, mixed]), gt, ties=ties)
    original = metrics.retrieval_ranks(texts, images, gt, ties=ties)
    assert columns["rank"].tolist() == (stressed.ranks + 1).tolist()
    assert columns["hit1_original"].tolist() == (original.ranks == 0).tolist()
    assert columns["false_top1"].tolist() == (stressed.top1 >= len(images)).tolist()
    m = ranked.metrics
    assert 100 * columns["hit1"].mean() == pytest.approx(m["t2i_R@1"])
    assert 100 * columns["hit1_original"].mean() == pytest.approx(m["t2i_R@1_original"])
    assert 100 * columns["false_top1"].mean() == pytest.approx(m["t2i_false_R@1"])
    # a false top-1 is never a hit
    assert not (columns["false_top1"] & columns["hit1"]).any()


def test_evaluate_command_writes_the_query_outcomes(tmp_path):
    """`vlstress evaluate` writes one block, image queries then caption queries, that reads back
    and adds up to the record's R@1 (duplicate captions: the tie policy decides)."""
    model = {"slug": "toy", "arch": "toy-arch", "weights_label": "random-init (seed 0)", "seed": 0}
    manifest = {
        "dataset": "toy",
        "images": [
            {"image": "a", "path": "a", "caption": ["a1", "a2"]},
            {"image": "b", "path": "b", "caption": ["b1"]},
        ],
    }
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    images = np.eye(2, dtype=np.float32)
    texts = np.array([[1.0, 0.0], [0.5, 0.5], [0.5, 0.5]], dtype=np.float32)  # a2 == b1
    for name, array in (("images.npy", images), ("texts.npy", texts)):
        np.save(tmp_path / name, array)
        (tmp_path / f"{name}.json").write_text(
            json.dumps({"provenance": {"model": model, "seed": 0, "device": "cpu"}})
        )
    out = tmp_path / "metrics" / "original.json"
    argv = [
        "evaluate",
        "--manifest",
        str(tmp_path / "manifest.json"),
        "--image-emb",
        str(tmp_path / "images.npy"),
        "--text-emb",
        str(tmp_path / "texts.npy"),
        "--ties",
        "pessimistic",
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    [block] = read_outcomes(outcomes_path(out))
    assert outcomes_path(out) == tmp_path / "metrics" / "original.outcomes.npz"
    assert block.unit == "query" and block.n == 5
    assert block.column("direction").tolist() == ["i2t", "i2t", "t2i", "t2i", "t2i"]
    # image b ties its caption b1 with a2; captions a2 and b1 tie images a and b
    assert block.column("rank").tolist() == [1, 2, 1, 2, 2]
    assert block.column("hit1").tolist() == [True, False, True, False, False]
    record = json.loads(out.read_text())["metrics"]
    direction, hit1 = block.column("direction"), block.column("hit1")
    assert 100 * hit1[direction == "i2t"].mean() == pytest.approx(record["i2t_R@1"]) == 50.0
    assert 100 * hit1[direction == "t2i"].mean() == pytest.approx(record["t2i_R@1"])
    assert record["t2i_R@1"] == pytest.approx(100 / 3)
    first = outcomes_path(out).read_bytes()
    assert main(argv) == 0 and outcomes_path(out).read_bytes() == first  # deterministic bytes
