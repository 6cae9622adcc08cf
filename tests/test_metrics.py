"""Known-answer tests for the retrieval metrics on hand-made similarity matrices."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from vlstress import metrics


def ranks(scores, gt, chunk_size=2):
    """Ranks from a given score matrix (queries = identity rows, gallery = the matrix)."""
    scores = np.asarray(scores, dtype=np.float32)
    eye = np.eye(scores.shape[0], dtype=np.float32)
    return metrics.retrieval_ranks(eye, scores.T, gt, chunk_size=chunk_size)


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
    assert np.isnan(metrics.drop_rate(0.0, 0.0))


def test_image_text_recalls_with_uneven_caption_counts():
    # 2 images; image 0 has 2 captions, image 1 has 3 (like Karpathy's 6-caption images)
    images = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    texts = np.array([[0.9, 0.1], [0.2, 0.8], [0.1, 0.9], [0.8, 0.2], [0.0, 1.0]], dtype=np.float32)
    owner = [0, 0, 1, 1, 1]
    out = metrics.image_text_recalls(images, texts, owner, ks=(1, 5))
    # i2t: image 0 best own caption 0.9 (rank 0); image 1 best own caption 1.0 (rank 0)
    assert out["i2t_R@1"] == 100.0
    # t2i: caption 1 ([.2,.8]) prefers image 1 but belongs to 0; caption 3 ([.8,.2]) prefers image 0 but belongs to 1
    assert out["t2i_R@1"] == pytest.approx(60.0)
    assert out["t2i_R@5"] == 100.0


def test_pad_ground_truth_rejects_empty():
    with pytest.raises(ValueError):
        metrics.pad_ground_truth([[0], []])
    padded = metrics.pad_ground_truth([[1], [2, 3]])
    assert padded.tolist() == [[1, -1], [2, 3]]
    assert padded.dtype == torch.long
