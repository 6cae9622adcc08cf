"""The work of `vlstress ood-detect`: out-of-distribution detection of one model, in-distribution
test set vs one OOD set.

Both sets are scored against the in-distribution classifier, from embeddings already computed
(vlstress.suites.ood.scores). One record per score (task `ood`, condition {ood, score}): AUROC,
FPR at 95% TPR, AUPR-In, AUPR-Out (%); per record the score of every ID image, then of every
OOD image (`Detection.outcomes`, vlstress.suites.ood.resampling); the ROC curves
(`Detection.roc_sidecar`) and the figure's curves.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vlstress import provenance
from vlstress.embedding.files import load_embeddings, same_model
from vlstress.errors import VlstressError
from vlstress.io import sha256_file
from vlstress.outcomes import Outcomes
from vlstress.record import Record, assemble
from vlstress.report.intervals import bootstrap_interval
from vlstress.suites.ood import scores as ood
from vlstress.suites.ood.resampling import auroc_resampling, image_outcomes
from vlstress.suites.zeroshot import classifier
from vlstress.testsets import manifest as testsets
from vlstress.testsets.manifest import shared_classes


@dataclass(frozen=True)
class Detection:
    """What `vlstress ood-detect` writes: records, their per-image outcomes (block i for record i),
    ROC curves (the sidecar), the figure."""

    records: list[Record]
    outcomes: list[Outcomes]
    roc_sidecar: dict[str, Any]
    # score -> (FPR, TPR, AUROC %, its interval's low and high: NaN where there is none)
    curves: dict[str, tuple[list[float], list[float], float, float, float]]
    title: str
    block: dict[str, Any]

    def figure(self):
        """The ROC curves (matplotlib figure)."""
        from vlstress.suites.ood.roc import roc_figure

        return roc_figure(self.title, self.curves)


def detect(
    testset: Path,
    image_emb: Path,
    classifier_path: Path,
    ood_testset: Path,
    ood_emb: Path,
    *,
    scores: list[str],
    temperature: float,
    log: logging.Logger,
    interval: tuple[float, int, int] = (0.95, 1000, 0),
) -> Detection:
    """Score both sets with each of `scores` (`log`: the command's logger, one line per score);
    `interval`: (confidence, resamples, seed) of each AUROC's BCa interval on the figure, as the
    headline table computes it."""
    ident = testsets.load(testset)
    outside = testsets.load(ood_testset)
    shared = shared_classes(outside, ident)
    if shared:
        raise VlstressError(
            f"OOD set {outside.dataset} shares class(es) with the in-distribution set "
            f"{ident.dataset}: {', '.join(shared)}; drop them from the OOD set (--drop)"
        )
    id_vectors, id_meta = load_embeddings(image_emb, len(ident.images), "in-distribution image")
    ood_vectors, ood_meta = load_embeddings(ood_emb, len(outside.images), "OOD image")
    weights, clf_meta = classifier.load(classifier_path, ident.classes)
    model = same_model(image_emb, id_meta, (ood_emb, ood_meta), (classifier_path, clf_meta))
    scale = classifier.logit_scale(classifier_path, clf_meta)
    # cosines of an image-text model; a timm model's log class probabilities (its MCM at T = 1
    # is its MSP)
    id_cos = classifier.scores(id_vectors.astype(np.float64), weights.astype(np.float64), clf_meta)
    ood_cos = classifier.scores(
        ood_vectors.astype(np.float64), weights.astype(np.float64), clf_meta
    )
    inputs = [
        testsets.manifest_path(testset),
        image_emb,
        classifier_path,
        testsets.manifest_path(ood_testset),
        ood_emb,
    ]
    block = provenance.build(
        "ood-detect",
        {
            "scores": scores,
            "temperature": temperature,
            "logit_scale": scale,
            "positive": "in-distribution",
        },
        seed=id_meta["provenance"].get("seed"),
        model=model,
        device=id_meta["provenance"].get("device"),
        inputs={str(p): sha256_file(p) for p in inputs},
        packages=("scikit-learn",),
    )
    records, outcomes, curves, roc = [], [], {}, {}
    for name in scores:
        id_scores = ood.score(name, id_cos, scale, temperature)
        ood_scores = ood.score(name, ood_cos, scale, temperature)
        metrics = ood.detection_metrics(id_scores, ood_scores)
        records.append(
            assemble(
                "ood",
                dataset={
                    "name": ident.dataset,
                    "kind": ident.kind,
                    "n_images": len(ident.images),
                    "n_classes": len(ident.classes),
                    "ood": outside.dataset,
                    "n_ood_images": len(outside.images),
                },
                condition={"ood": outside.dataset, "score": name},
                metrics=metrics,
                provenance=block,
            )
        )
        outcomes.append(image_outcomes(id_scores, ood_scores))
        points = ood.roc_points(id_scores, ood_scores)
        roc[name] = {**points, "auroc": metrics["auroc"], "fpr95": metrics["fpr95"]}
        lo, hi, _ = bootstrap_interval(auroc_resampling(outcomes[-1]), *interval)
        curves[name] = (points["fpr"], points["tpr"], metrics["auroc"], lo, hi)
        log.info(
            "%s %s vs %s, %s: AUROC %.1f%%, FPR@95 %.1f%%",
            model["slug"],
            ident.dataset,
            outside.dataset,
            name,
            metrics["auroc"],
            metrics["fpr95"],
        )
    title = (
        f"{model['slug']}: {ident.dataset} (ID, {len(ident.images)}) vs {outside.dataset} (OOD, "
        f"{len(outside.images)})"
    )
    roc_sidecar = {
        "kind": "ood-roc",
        "in_distribution": ident.dataset,
        "ood": outside.dataset,
        "roc": roc,
    }
    return Detection(records, outcomes, roc_sidecar, curves, title, block)
