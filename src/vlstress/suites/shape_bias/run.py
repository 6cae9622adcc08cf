"""The work of `vlstress shape-bias`: one model's decisions on the cue-conflict stimuli, from the
image embeddings and the zero-shot classifier the model's zero-shot jobs wrote: over the 16
category names (top class), or over the 1000 ImageNet classes (the category whose classes have
the highest mean softmax probability, `decisions.imagenet16_decisions`).

One record per condition (task `shape_bias`, condition {category}: `all`, then each shape
category): shape bias, the shares of shape / texture / other decisions (% of the cue-conflict
stimuli), the counts. The sidecar lists every stimulus with its decision, so a count can be
checked by hand; the outcomes file beside the records keeps each record's stimuli
(`resampling.stimulus_outcomes`) for the paired comparisons.
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
from vlstress.suites.shape_bias import decisions as shape_bias
from vlstress.suites.shape_bias.resampling import stimulus_outcomes
from vlstress.suites.zeroshot import classifier
from vlstress.testsets import manifest as testsets
from vlstress.testsets.labelmaps import imagenet_classnames


def _is_imagenet(path: Path) -> bool:
    """Whether a classifier is over the 1000 ImageNet classes (`decision: imagenet16`)."""
    from vlstress.io import read_json, sidecar

    meta = (
        read_json(sidecar(path), "zero-shot classifier sidecar") if sidecar(path).is_file() else {}
    )
    return len(meta.get("classes") or ()) == 1000


def evaluate(
    testset_path: Path, image_emb: Path, classifier_path: Path
) -> tuple[list[Record], dict[str, Any], list[Outcomes]]:
    """(records, sidecar of per-stimulus decisions, the per-stimulus outcomes of each record) of
    one model."""
    stimuli = testsets.load(testset_path)
    if any("texture" not in entry for entry in stimuli.images):
        raise VlstressError(
            f"{testset_path}: not a cue-conflict set (its images carry no texture category); "
            "build it with `vlstress cue-conflict`"
        )
    embeddings, emb_meta = load_embeddings(image_emb, len(stimuli.images), "cue-conflict image")
    imagenet = _is_imagenet(classifier_path)
    weights, clf_meta = classifier.load(
        classifier_path, list(imagenet_classnames()) if imagenet else stimuli.classes
    )
    model = same_model(image_emb, emb_meta, (classifier_path, clf_meta))
    cosines = classifier.scores(embeddings.astype(np.float64), weights.astype(np.float64), clf_meta)
    if imagenet:  # softmax at the model's logit scale, averaged over each category's classes
        logits = classifier.logit_scale(classifier_path, clf_meta) * cosines
        probabilities = np.exp(logits - logits.max(axis=1, keepdims=True))
        probabilities /= probabilities.sum(axis=1, keepdims=True)
        chosen = shape_bias.imagenet16_decisions(probabilities, stimuli.classes)
        decision = "ImageNet-1k zero-shot classifier, the category of highest mean probability"
    else:
        chosen = cosines.argmax(axis=1)
        decision = "zero-shot classifier over the 16 category names (top class)"
    shapes = [entry["label"] for entry in stimuli.images]
    textures = [entry["texture"] for entry in stimuli.images]
    groups = shape_bias.by_category(chosen, shapes, textures, stimuli.classes)
    block = provenance.build(
        "shape-bias",
        {
            "decision": decision,
            "templates": clf_meta.get("templates_source"),
            "human_shape_bias": shape_bias.HUMAN_SHAPE_BIAS,
        },
        seed=emb_meta["provenance"].get("seed"),
        model=model,
        device=emb_meta["provenance"].get("device"),
        inputs={
            str(p): sha256_file(p)
            for p in (testsets.manifest_path(testset_path), image_emb, classifier_path)
        },
    )
    dataset = {
        "name": stimuli.dataset,
        "kind": stimuli.kind,
        "n_images": len(stimuli.images),
        "n_classes": len(stimuli.classes),
    }
    records = [
        assemble(
            "shape_bias",
            dataset=dataset,
            condition={"category": category},
            metrics=values,
            provenance=block,
        )
        for category, values in groups.items()
    ]
    shape_of, texture_of = np.asarray(shapes), np.asarray(textures)
    outcomes = [
        stimulus_outcomes(chosen[rows], shape_of[rows], texture_of[rows])
        for rows in (
            np.ones(len(chosen), dtype=bool)
            if category == shape_bias.ALL
            else shape_of == stimuli.classes.index(category)
            for category in groups
        )
    ]
    names = stimuli.classes
    sidecar = {
        "kind": "cue-conflict-decisions",
        "classes": names,
        "stimuli": [
            {
                "path": entry["path"],
                "shape": names[entry["label"]],
                "texture": names[entry["texture"]],
                "decision": names[int(decision)],
            }
            for entry, decision in zip(stimuli.images, chosen)
        ],
    }
    return records, sidecar, outcomes
