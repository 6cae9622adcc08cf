"""OOD scores and detection metrics: known answers, a hand-written AUROC, agreement with
scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp, softmax
from sklearn.metrics import roc_auc_score

from vlstress.errors import VlstressError
from vlstress.suites.ood import scores as ood


def pairwise_auroc(pos: np.ndarray, neg: np.ndarray) -> float:
    """P(score of an ID image > score of an OOD image), ties counted half (the Mann-Whitney
    statistic)."""
    wins = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return 100.0 * wins / (len(pos) * len(neg))


def test_auroc_equals_a_hand_computation_and_scikit_learn():
    rng = np.random.default_rng(0)
    pos = np.round(rng.normal(1.0, 1.0, 200), 1)  # rounded: ties happen
    neg = np.round(rng.normal(0.0, 1.0, 150), 1)
    metrics = ood.detection_metrics(pos, neg)
    assert metrics["auroc"] == pytest.approx(pairwise_auroc(pos, neg), abs=1e-9)
    labels = np.r_[np.ones(200), np.zeros(150)]
    assert metrics["auroc"] == pytest.approx(100 * roc_auc_score(labels, np.r_[pos, neg]))


def test_fpr_at_95_tpr_known_answer():
    id_scores = np.arange(1, 101, dtype=float)  # keeping 95 of 100 ID images: threshold 6
    ood_scores = np.array([0.0, 5.0, 6.0, 7.0, 50.0])
    assert ood.fpr_at_tpr(id_scores, ood_scores) == pytest.approx(0.6)  # 6, 7 and 50 pass
    assert ood.detection_metrics(id_scores, ood_scores)["fpr95"] == pytest.approx(60.0)


def test_perfect_and_inverted_separation():
    perfect = ood.detection_metrics(np.array([5.0, 6.0, 7.0]), np.array([1.0, 2.0]))
    assert perfect == {"auroc": 100.0, "fpr95": 0.0, "aupr_in": 100.0, "aupr_out": 100.0}
    inverted = ood.detection_metrics(np.array([1.0, 2.0]), np.array([5.0, 6.0, 7.0]))
    assert inverted["auroc"] == 0.0 and inverted["fpr95"] == 100.0


def test_scores_known_values():
    cos = np.array([[0.3, 0.1, -0.2], [0.05, 0.05, 0.0]])
    assert np.allclose(ood.score("mcm", cos, 100.0), softmax(cos, axis=1).max(axis=1))
    assert np.allclose(
        ood.score("mcm", cos, 100.0, temperature=0.01), softmax(cos / 0.01, axis=1).max(axis=1)
    )
    assert np.allclose(ood.score("msp", cos, 100.0), softmax(100 * cos, axis=1).max(axis=1))
    assert np.allclose(ood.score("max_logit", cos, 100.0), [30.0, 5.0])
    assert np.allclose(ood.score("energy", cos, 100.0), logsumexp(100 * cos, axis=1))
    assert np.allclose(
        ood.score("energy", cos, 100.0, temperature=2.0), 2.0 * logsumexp(50 * cos, axis=1)
    )
    with pytest.raises(VlstressError, match="unknown OOD score 'maxlogit'"):
        ood.score("maxlogit", cos, 100.0)


def test_roc_points_are_thinned_and_monotone():
    rng = np.random.default_rng(3)
    points = ood.roc_points(rng.normal(1, 1, 2000), rng.normal(0, 1, 2000), max_points=50)
    assert len(points["fpr"]) <= 50 and points["fpr"][0] == 0.0 and points["tpr"][-1] == 1.0
    assert np.all(np.diff(points["fpr"]) >= 0) and np.all(np.diff(points["tpr"]) >= 0)


def test_empty_side_is_an_error():
    with pytest.raises(VlstressError, match="both sides"):
        ood.detection_metrics(np.array([1.0]), np.array([]))


def test_ood_auroc_names_n_and_that_the_bars_have_no_interval():
    """Each panel's title gives the in-distribution and OOD n of its records (`?` where the summary
    has no OOD count); without a headline table the notes say the bars are point estimates."""
    import json

    import pandas as pd

    from vlstress.report import figures as common
    from vlstress.suites.ood import figures

    rows = [
        {
            "model": label,
            "label": label,
            "dataset": "objects",
            "n_images": n,
            "n_ood_images": 40 if ood == "scenes" else np.nan,
            "task": "ood",
            "metric": "auroc",
            "value": value,
            "seed": np.nan,
            "condition_json": json.dumps({"ood": ood, "score": score}),
        }  # fmt: skip
        for label, n, value in (("RN50", 30, 70.0), ("ViT-B-32", 30, 55.0))
        for ood in ("scenes", "noise")
        for score in ("msp", "energy")
    ]
    common.setup()
    fig, notes = figures.ood_auroc(pd.DataFrame(rows))
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == ["objects (n = 30) vs scenes (n = 40)", "objects (n = 30) vs noise (n = ?)"]
    assert notes[0] == "n = 30 in-distribution images per model (objects)"
    assert figures.NO_INTERVAL in notes
