"""The work of `vlstress visual-factors`: one model's top-1 per ImageNet-X factor, from the image
embeddings and the zero-shot classifier of an ImageNet val test set its zero-shot jobs wrote.

One record per condition (task `visual_factors`, condition {factor}: `all`, then the 16 factors
in ImageNet-X's order): top-1 (%), error ratio, images with the factor and their share. The
sidecar lists every annotated image with its label and prediction, so ImageNet-X's own code can
score the same predictions (tests/test_visual_factors.py does).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from vlstress import provenance
from vlstress.embedding.files import load_embeddings, same_model
from vlstress.errors import VlstressError
from vlstress.io import sha256_file
from vlstress.outcomes import Outcomes
from vlstress.record import Record, assemble
from vlstress.suites.visual_factors import factors, resampling
from vlstress.suites.zeroshot import classifier
from vlstress.testsets import manifest as testsets


def evaluate(
    testset_path: Path,
    image_emb: Path,
    classifier_path: Path,
    *,
    which: str,
    filter_prototypes: bool,
    complete: bool,
) -> tuple[list[Record], dict[str, Any], list[Outcomes]]:
    """(records, sidecar of per-image predictions, one block of per-image outcomes per record) of
    one model."""
    from vlstress.testsets.labelmaps import imagenet_wnids

    data = testsets.load(testset_path)
    if list(data.class_ids) != list(imagenet_wnids()):
        raise VlstressError(
            f"test set {data.dataset} is of kind {data.kind} with {len(data.classes)} classes: "
            "visual factors need the 1000 ImageNet classes (kind imagenet, ImageNet val)"
        )
    embeddings, emb_meta = load_embeddings(image_emb, len(data.images), "test-set image")
    weights, clf_meta = classifier.load(classifier_path, data.classes)
    model = same_model(image_emb, emb_meta, (classifier_path, clf_meta))
    table = factors.load_table(which, filter_prototypes)
    joined = factors.join(data, table, complete)
    scores = classifier.scores(
        embeddings[joined.rows].astype(np.float64), weights.astype(np.float64), clf_meta
    )
    predicted = scores.argmax(axis=1)
    correct = predicted == joined.labels
    found = factors.factor_metrics(correct, joined.factors)
    block = provenance.build(
        "visual-factors",
        {
            "annotations": which,
            "filter_prototypes": filter_prototypes,
            "complete": complete,
            "n_annotated": joined.n_annotated,
            "n_missing": len(joined.missing),
            "templates": clf_meta.get("templates_source"),
        },
        seed=emb_meta["provenance"].get("seed"),
        model=model,
        device=emb_meta["provenance"].get("device"),
        inputs={
            str(p): sha256_file(p)
            for p in (testsets.manifest_path(testset_path), image_emb, classifier_path)
        },
        packages=("imagenet-x",),
    )
    dataset = {
        "name": data.dataset,
        "kind": data.kind,
        "n_images": len(joined.rows),
        "n_classes": len(data.classes),
    }
    records = [
        assemble(
            "visual_factors",
            dataset=dataset,
            condition={"factor": name},
            metrics=values,
            provenance=block,
        )
        for name, values in found.items()
    ]
    sidecar = {
        "kind": "imagenet-x-predictions",
        "annotations": which,
        "file_name": joined.files,
        "class": joined.labels.tolist(),
        "predicted_class": predicted.tolist(),
    }
    columns = {name: j for j, name in enumerate(factors.factor_names())}
    outcomes = [
        resampling.image_outcomes(
            correct,
            np.ones(len(correct), bool)
            if name == factors.ALL
            else joined.factors[:, columns[name]] == 1,
            joined.labels,
        )
        for name in found
    ]
    return records, sidecar, outcomes
