"""The work of `vlstress evaluate-stability`: a model's flip probability and top-5 distance on
every perturbation's sequences, one record each (task `stability`, condition {set, perturbation,
difficulty, images}: `images` is the kind of the test set the frames come from, e.g. `imagenet`,
when the frames' manifest says it; mFR against AlexNet's published values needs ImageNet val).

Scores are the model's frame embeddings x the clean test set's zero-shot classifier (cosine; the
logit scale changes no rank). Frames are regrouped into sequences by the manifest's `sequence` and
`frame`, and scored with vlstress.suites.stability.metrics. Metrics: `flip_probability` (%),
`top5_distance`, and the top-1 accuracy of the first frames and of all frames (%).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vlstress import provenance
from vlstress.embedding.files import load_embeddings, same_model
from vlstress.errors import VlstressError
from vlstress.io import sha256_file
from vlstress.outcomes import Outcomes
from vlstress.record import Record, assemble
from vlstress.suites.stability import metrics, resampling
from vlstress.suites.zeroshot import classifier
from vlstress.suites.zeroshot.paths import Evaluation
from vlstress.testsets import manifest as testsets


def sequences_of(entries: list[dict], where: str) -> list[list[int]]:
    """Rows of each sequence in frame order; a missing or repeated frame is named."""
    grouped: dict[int, dict[int, int]] = {}
    for row, entry in enumerate(entries):
        if "sequence" not in entry or "frame" not in entry:
            raise VlstressError(f"{where}: image {entry.get('path')} has no sequence/frame")
        frames = grouped.setdefault(int(entry["sequence"]), {})
        if int(entry["frame"]) in frames:
            raise VlstressError(
                f"{where}: sequence {entry['sequence']} has frame {entry['frame']} twice"
            )
        frames[int(entry["frame"])] = row
    out = []
    for number, frames in sorted(grouped.items()):
        if sorted(frames) != list(range(len(frames))):
            raise VlstressError(
                f"{where}: sequence {number} has frames {sorted(frames)}, not 0..{len(frames) - 1}"
            )
        out.append([frames[i] for i in range(len(frames))])
    return out


def evaluate(evaluation: Evaluation, *, noise: bool) -> tuple[Record, Outcomes]:
    """The record of one perturbation's sequences for the model of `evaluation`'s paths, and its
    per-sequence outcomes (vlstress.suites.stability.resampling)."""
    folder, emb_path, clf_path = (Path(p) for p in evaluation.paths())
    testset = testsets.load(folder)
    embeddings, emb_meta = load_embeddings(emb_path, len(testset.images), "frame")
    weights, clf_meta = classifier.load(clf_path, testset.classes)
    model = same_model(emb_path, emb_meta, (clf_path, clf_meta))
    groups = sequences_of(testset.images, str(folder))
    difficulty = int(evaluation.condition["difficulty"])
    scores = classifier.scores(embeddings, weights, clf_meta)
    labels = np.array(testset.labels)
    predictions = [scores[rows].argmax(axis=1) for rows in groups]
    ranks = [metrics.ranks(scores[rows]) for rows in groups]
    flips = metrics.flip_shares(predictions, noise=noise, difficulty=difficulty)
    distances = metrics.top5_distances(ranks, noise=noise, difficulty=difficulty)
    first_labels = np.array([labels[rows[0]] for rows in groups])
    first_correct = np.array([p[0] for p in predictions]) == first_labels
    values = {
        "flip_probability": 100.0 * float(np.mean(flips)),
        "top5_distance": float(np.mean(distances)),
        "top1_first_frame": 100.0 * float(np.mean(first_correct)),
        "top1_frames": 100.0 * float(np.mean(scores.argmax(axis=1) == labels)),
    }
    outcomes = resampling.sequence_outcomes(flips, distances, first_correct, first_labels)
    images = (testset.source or {}).get("clean_kind")
    condition = {**evaluation.condition, **({"images": images} if images else {})}
    record = assemble(
        "stability",
        dataset={
            "name": testset.dataset,
            "kind": testset.kind,
            "n_images": len(groups),
            "n_frames": len(testset.images),
            "n_classes": len(testset.classes),
        },
        condition=condition,
        metrics=values,
        provenance=provenance.build(
            "evaluate-stability",
            {
                "noise": noise,
                "pairs": "frame 0 vs each" if noise else f"consecutive, stride {difficulty}",
                **(
                    {"class_map_rule": clf_meta["class_map_rule"]}
                    if "class_map_rule" in clf_meta
                    else {}
                ),
            },
            seed=emb_meta["provenance"]["seed"],
            model=model,
            device=emb_meta["provenance"]["device"],
            inputs={
                str(p): sha256_file(p) for p in (testsets.manifest_path(folder), emb_path, clf_path)
            },
        ),
    )
    return record, outcomes
