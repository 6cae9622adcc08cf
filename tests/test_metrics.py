"""Known-answer tests for the retrieval metrics on hand-made similarity matrices."""

from __future__ import annotations

import numpy as np
import pytest

from vlstress import retrieval_metrics as metrics


def ranks(scores, gt, chunk_size=2, ties="optimistic"):
    """Ranks from a given score matrix (queries = identity rows, gallery = the matrix)."""
    scores = np.asarray(scores, dtype=np.float32)
    eye = np.eye(scores.shape[0], dtype=np.float32)
    return metrics.retrieval_ranks(eye, scores.T, gt, chunk_size=chunk_size, ties=ties)


def test_ranks_count_items_strictly_above_best_ground_truth():
    scores = [
        [0.9, 0.1, 0.5, 0.3],  # gt {0}: nothing above -> 0
        [0.9, 0.1, 0.5, 0.3],  # gt {1}: 0.9, 0.5, 0.3 above -> 3
        [0.2, 0.8, 0.7, 0.9],  # gt {1, 2}: best gt 0.8, only 0.9 above -> 1
    ]
    result = ranks(scores, [[0], [1], [1, 2]])
    assert result.ranks.tolist() == [0, 3, 1]
    assert result.top1.tolist() == [0, 0, 3]


def test_ties_go_to_the_ground_truth():
    scores = [[0.5, 0.5, 0.5], [0.1, 0.7, 0.7]]
    result = ranks(scores, [[2], [1]])
    assert result.ranks.tolist() == [0, 0]
    assert result.top1.tolist() == [2, 1]  # a tie with the gt counts as the gt


def test_chunking_does_not_change_results():
    rng = np.random.default_rng(0)
    q, g = rng.normal(size=(37, 8)).astype(np.float32), rng.normal(size=(53, 8)).astype(np.float32)
    gt = [[int(i % 53), int((i * 7) % 53)] for i in range(37)]
    full = metrics.retrieval_ranks(q, g, gt, chunk_size=1000)
    small = metrics.retrieval_ranks(q, g, gt, chunk_size=3)
    np.testing.assert_array_equal(full.ranks, small.ranks)
    np.testing.assert_array_equal(full.top1, small.top1)
    # reference: a per-row argsort
    scores = q @ g.T
    for row, items in enumerate(gt):
        best = max(scores[row, i] for i in items)
        assert full.ranks[row] == int((scores[row] > best).sum())


def test_recall_at_k_known_answer():
    assert metrics.recall_at_k(np.array([0, 3, 1, 0, 9]), ks=(1, 2, 5, 10)) == {
        "R@1": 40.0,
        "R@2": 60.0,
        "R@5": 80.0,
        "R@10": 100.0,
    }


def test_false_recall_and_drop_rate():
    is_distractor = np.array([False, False, True, True])
    assert metrics.false_recall_at_1(np.array([0, 2, 3, 1]), is_distractor) == 50.0
    assert metrics.drop_rate(80.0, 60.0) == pytest.approx(25.0)
    assert metrics.drop_rate(0.0, 0.0) is None  # undefined: None, never NaN
    assert metrics.drop_rate(50.0, 50.0) == 0.0


def test_image_text_recalls_with_uneven_caption_counts():
    # 2 images; image 0 has 2 captions, image 1 has 3 (like Karpathy's 6-caption images)
    images = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    texts = np.array([[0.9, 0.1], [0.2, 0.8], [0.1, 0.9], [0.8, 0.2], [0.0, 1.0]], dtype=np.float32)
    owner = [0, 0, 1, 1, 1]
    out = metrics.image_text_recalls(images, texts, owner, ks=(1, 5))
    # i2t: image 0 best own caption 0.9 (rank 0); image 1 best own caption 1.0 (rank 0)
    assert out["i2t_R@1"] == 100.0
    # t2i: caption 1 ([.2,.8]) prefers image 1 but belongs to 0; caption 3 ([.8,.2]) prefers image 0
    # but belongs to 1
    assert out["t2i_R@1"] == pytest.approx(60.0)
    assert out["t2i_R@5"] == 100.0


def test_pad_ground_truth_rejects_empty():
    with pytest.raises(ValueError):
        metrics.pad_ground_truth([[0], []])
    padded = metrics.pad_ground_truth([[1], [2, 3]])
    assert padded.tolist() == [[1, -1], [2, 3]]
    assert padded.dtype == np.int64


def test_rows_by_owner():
    assert metrics.rows_by_owner([1, 0, 1, 2, 0], 3) == [[1, 4], [0, 2], [3]]
    assert metrics.rows_by_owner([0, 0], 2) == [[0, 1], []]
    with pytest.raises(ValueError, match="owners must lie in 0..1"):
        metrics.rows_by_owner([0, 2], 2)


# --- tie policies ----------------------------------------------------------------------------

# One row per case; gallery items 0..4. In the stress tests below items 3 and 4 are distractors.
TIE_SCORES = [
    [0.9, 0.2, 0.1, 0.9, 0.3],  # gt {0}: a distractor (3) ties the gt at the top
    [0.1, 0.7, 0.7, 0.2, 0.3],  # gt {1, 2}: two gt items tie at the top, nothing else
    [0.5, 0.8, 0.3, 0.8, 0.1],  # gt {1}: an original (0) below, a distractor (3) ties the gt
    [0.6, 0.4, 0.6, 0.6, 0.2],  # gt {2}: an original (0) and a distractor (3) tie the gt
    [0.1, 0.9, 0.5, 0.95, 0.2],  # gt {1}: a distractor strictly above, no tie
    [0.8, 0.3, 0.1, 0.2, 0.4],  # gt {0}: no tie, a clean hit
]
TIE_GT = [[0], [1, 2], [1], [2], [1], [0]]
#                       ranks                 top-1
TIE_ANSWERS = {
    "optimistic": ([0, 0, 0, 0, 1, 0], [0, 1, 1, 2, 3, 0]),
    "pessimistic": ([1, 0, 1, 2, 1, 0], [3, 1, 3, 0, 3, 0]),
}


@pytest.mark.parametrize("ties", ["optimistic", "pessimistic"])
@pytest.mark.parametrize("chunk_size", [1, 4, 100])
def test_tie_policies_known_ranks_and_top1(ties, chunk_size):
    result = ranks(TIE_SCORES, TIE_GT, chunk_size=chunk_size, ties=ties)
    expected_ranks, expected_top1 = TIE_ANSWERS[ties]
    assert result.ranks.tolist() == expected_ranks
    assert result.top1.tolist() == expected_top1


def test_tie_policies_known_recall_and_false_recall():
    is_distractor = np.array([False, False, False, True, True])
    answers = {}
    for ties in ("optimistic", "pessimistic"):
        result = ranks(TIE_SCORES, TIE_GT, ties=ties)
        answers[ties] = (
            metrics.recall_at_k(result.ranks, ks=(1, 2, 3)),
            metrics.false_recall_at_1(result.top1, is_distractor),
        )
    assert answers["optimistic"] == (
        {"R@1": pytest.approx(500 / 6), "R@2": 100.0, "R@3": 100.0},
        pytest.approx(100 / 6),
    )
    assert answers["pessimistic"] == (
        {"R@1": pytest.approx(200 / 6), "R@2": pytest.approx(500 / 6), "R@3": 100.0},
        pytest.approx(300 / 6),
    )


def test_tie_policies_agree_without_ties():
    rng = np.random.default_rng(1)
    q, g = rng.normal(size=(29, 8)).astype(np.float32), rng.normal(size=(41, 8)).astype(np.float32)
    gt = [[int(i % 41), int((i * 5) % 41)] for i in range(29)]
    a = metrics.retrieval_ranks(q, g, gt, chunk_size=7)
    b = metrics.retrieval_ranks(q, g, gt, chunk_size=7, ties="pessimistic")
    np.testing.assert_array_equal(a.ranks, b.ranks)
    np.testing.assert_array_equal(a.top1, b.top1)
    assert len(np.unique(q @ g.T)) == 29 * 41  # really no ties


def test_ties_between_ground_truth_items_never_count():
    # gt {0, 2, 4} all tie at the top with nothing else: a hit under both policies
    for ties in ("optimistic", "pessimistic"):
        result = ranks([[0.7, 0.1, 0.7, 0.2, 0.7]], [[4, 2, 0]], ties=ties)
        assert result.ranks.tolist() == [0]
        assert result.top1.tolist()[0] in (0, 2, 4)


def test_ranks_from_scores_on_a_chunk_with_padding():
    scores = np.array([[0.5, 0.5, 0.1], [0.3, 0.9, 0.9]], dtype=np.float32)
    gt = metrics.pad_ground_truth([[0], [2, 1]])
    ranks_, top1 = metrics.ranks_from_scores(scores, gt)
    assert ranks_.tolist() == [0, 0] and top1.tolist() == [0, 2]
    ranks_, top1 = metrics.ranks_from_scores(scores, gt, "pessimistic")
    assert ranks_.tolist() == [1, 0] and top1.tolist() == [1, 2]
    # padding (-1) never marks gallery item 0 as ground truth: item 0 is a tied non-gt item in both
    # rows
    gt = metrics.pad_ground_truth([[1], [2, 1]])
    ranks_, top1 = metrics.ranks_from_scores(
        np.array([[0.5, 0.5, 0.1], [0.9, 0.9, 0.9]], dtype=np.float32), gt, "pessimistic"
    )
    assert ranks_.tolist() == [1, 1] and top1.tolist() == [0, 0]


@pytest.mark.parametrize(
    "call",
    [
        lambda: metrics.ranks_from_scores(
            np.zeros((1, 2), dtype=np.float32), np.zeros((1, 1), dtype=np.int64), "random"
        ),
        lambda: metrics.retrieval_ranks(np.eye(2), np.eye(2), [[0], [1]], ties="random"),
        lambda: metrics.image_text_recalls(np.eye(2), np.eye(2), [0, 1], ties="random"),
        lambda: metrics.stress_recalls(
            np.eye(2), np.eye(2), [[0], [1]], np.eye(2), prefix="x", ties="random"
        ),
    ],
)
def test_unknown_tie_policy_is_named(call):
    with pytest.raises(
        ValueError, match="unknown tie policy 'random'; known: optimistic, pessimistic"
    ):
        call()


def test_image_text_recalls_tie_policy():
    # image 1's caption ties with image 0's caption: a hit when optimistic, a miss when pessimistic
    images = np.eye(2, dtype=np.float32)
    texts = np.array([[1.0, 0.0], [0.5, 0.5]], dtype=np.float32)
    assert metrics.image_text_recalls(images, texts, [0, 1], ks=(1,)) == {
        "i2t_R@1": 100.0,
        "t2i_R@1": 100.0,
    }
    assert metrics.image_text_recalls(images, texts, [0, 1], ks=(1,), ties="pessimistic") == {
        "i2t_R@1": 100.0,
        "t2i_R@1": 50.0,
    }


def stress_from_scores(scores, n_original, gt, **kwargs):
    """stress_recalls on queries = identity rows, so queries @ gallery.T is exactly `scores`."""
    scores = np.asarray(scores, dtype=np.float32)
    gallery = scores.T.copy()
    eye = np.eye(scores.shape[0], dtype=np.float32)
    return metrics.stress_recalls(eye, gallery[:n_original], gt, gallery[n_original:], **kwargs)


def test_stress_recalls_tie_policies_known_answers():
    common = {"prefix": "q", "ks": (1, 2)}
    optimistic = stress_from_scores(TIE_SCORES, 3, TIE_GT, **common)
    pessimistic = stress_from_scores(TIE_SCORES, 3, TIE_GT, ties="pessimistic", **common)
    # originals-only gallery (items 0-2): ranks optimistic 0 0 0 0 0 0, pessimistic 0 0 0 1 0 0
    assert optimistic == pytest.approx(
        {
            "q_R@1": 500 / 6,
            "q_R@2": 100.0,
            "q_R@1_original": 100.0,
            "q_false_R@1": 100 / 6,
            "q_drop_rate": 100 / 6,
        }
    )
    assert pessimistic == pytest.approx(
        {
            "q_R@1": 200 / 6,
            "q_R@2": 500 / 6,
            "q_R@1_original": 500 / 6,
            "q_false_R@1": 300 / 6,
            "q_drop_rate": 60.0,
        }
    )
    assert list(optimistic) == ["q_R@1", "q_R@2", "q_R@1_original", "q_false_R@1", "q_drop_rate"]


def test_stress_recalls_drop_rate_is_none_not_nan():
    out = stress_from_scores([[0.1, 0.9, 0.5]], 2, [[0]], prefix="t2i", ks=(1,))
    assert out == {
        "t2i_R@1": 0.0,
        "t2i_R@1_original": 0.0,
        "t2i_false_R@1": 0.0,
        "t2i_drop_rate": None,
    }


def test_stress_recalls_rejects_bad_inputs():
    with pytest.raises(ValueError, match="do not match"):
        metrics.stress_recalls(np.eye(3), np.eye(3), [[0], [1], [2]], np.ones((2, 4)), prefix="x")
    with pytest.raises(ValueError, match="3 queries but 2 ground-truth lists"):
        metrics.stress_recalls(np.eye(3), np.eye(3), [[0], [1]], np.eye(3), prefix="x")
    with pytest.raises(ValueError, match="outside the 3 originals"):
        metrics.stress_recalls(np.eye(3), np.eye(3), [[0], [1], [3]], np.eye(3), prefix="x")


def test_tie_policies_bound_any_argsort_order():
    """Quantised embeddings (many exact ties): the official argsort rank, under any order among
    ties, lies between the optimistic and the pessimistic rank, and both ends are reached."""
    rng = np.random.default_rng(3)
    q = np.round(rng.normal(size=(40, 4))).astype(np.float32)
    g = np.round(rng.normal(size=(60, 4))).astype(np.float32)
    gt = [sorted({int(i % 60), int((7 * i + 3) % 60)}) for i in range(40)]
    opt = metrics.retrieval_ranks(q, g, gt, chunk_size=9)
    pes = metrics.retrieval_ranks(q, g, gt, chunk_size=9, ties="pessimistic")
    scores = q @ g.T
    assert np.any(opt.ranks != pes.ranks), "the data has ties that matter"
    for row, items in enumerate(gt):
        best = scores[row, items].max()
        others = np.setdiff1d(np.arange(60), items)
        assert opt.ranks[row] == np.sum(scores[row, others] > best)
        assert pes.ranks[row] == np.sum(scores[row, others] >= best)
        for _ in range(5):  # argsort with a random order among ties: rank of the first ground truth
            order = np.lexsort((rng.permutation(60), -scores[row]))
            rank = int(np.flatnonzero(np.isin(order, items))[0])
            assert opt.ranks[row] <= rank <= pes.ranks[row]
        tied = others[scores[row, others] == best]
        if scores[row].max() > best:
            assert pes.top1[row] == opt.top1[row] == int(np.argmax(scores[row]))
        elif len(tied):
            assert pes.top1[row] == tied.min() and opt.top1[row] in items
        else:
            assert pes.top1[row] == opt.top1[row] and opt.top1[row] in items


def test_evaluate_command_record_and_ties(tmp_path):
    """`vlstress evaluate` writes the typed retrieval record; --ties is recorded and used."""
    import json

    from vlstress.cli import main

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
    # a2 and b1 are equal rows (duplicate captions)
    texts = np.array([[1.0, 0.0], [0.5, 0.5], [0.5, 0.5]], dtype=np.float32)
    for name, array in (("images.npy", images), ("texts.npy", texts)):
        np.save(tmp_path / name, array)
        (tmp_path / f"{name}.json").write_text(
            json.dumps({"provenance": {"model": model, "seed": 0, "device": "cpu"}})
        )
    argv = [
        "evaluate",
        "--manifest",
        str(tmp_path / "manifest.json"),
        "--image-emb",
        str(tmp_path / "images.npy"),
        "--text-emb",
        str(tmp_path / "texts.npy"),
        "--ks",
        "1,2",
    ]
    assert main([*argv, "--out", str(tmp_path / "opt.json")]) == 0
    assert main([*argv, "--ties", "pessimistic", "--out", str(tmp_path / "pes.json")]) == 0
    opt, pes = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("opt", "pes"))
    assert (
        opt["task"] == "retrieval"
        and opt["condition"] == {}
        and opt["schema"] == "vlstress.record/1"
    )
    assert opt["model"] == {"slug": "toy", "arch": "toy-arch", "weights": "random-init (seed 0)"}
    assert opt["dataset"] == {"name": "toy", "n_images": 2, "n_captions": 3}
    assert opt["provenance"]["params"] == {"ks": [1, 2], "chunk_size": 1024, "ties": "optimistic"}
    assert pes["provenance"]["params"]["ties"] == "pessimistic"
    # i2t: image b scores b1 and a2 equally -> hit / miss. t2i: a2 and b1 score images a and b
    # equally -> hits / misses.
    assert opt["metrics"] == {
        "i2t_R@1": 100.0,
        "i2t_R@2": 100.0,
        "t2i_R@1": 100.0,
        "t2i_R@2": 100.0,
    }
    assert pes["metrics"] == {
        "i2t_R@1": 50.0,
        "i2t_R@2": 100.0,
        "t2i_R@1": pytest.approx(100 / 3),
        "t2i_R@2": 100.0,
    }
