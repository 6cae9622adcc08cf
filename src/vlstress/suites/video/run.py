"""The work of `vlstress evaluate-video`: pm-0 .. pm-k of a model on every video test set of the
params, one record each (task `video`, condition {set}).

Scores are the model's frame embeddings (the zero-shot image job's, as for every test set) x the
test set's zero-shot classifier; a frame's top-1 is scored against the frame's own labels
(vlstress.suites.video.pmk). Beside each record, its per-anchor outcomes (`pmk.anchor_outcomes`):
two models' pm-k are compared with McNemar on the same anchors.
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
from vlstress.suites.video.pmk import anchor_outcomes
from vlstress.suites.zeroshot import classifier
from vlstress.suites.zeroshot.paths import Evaluation
from vlstress.testsets import manifest as testsets


def evaluate(evaluation: Evaluation, k_max: int) -> tuple[Record, Outcomes]:
    """A model's record on one video test set and its per-anchor outcomes."""
    folder, emb_path, clf_path = (Path(p) for p in evaluation.paths())
    testset = testsets.load(folder)
    missing = [e["path"] for e in testset.images if "anchor" not in e or "offset" not in e]
    if missing:
        raise VlstressError(
            f"test set {folder}: {missing[0]} has no anchor/offset: not a video test set "
            "(kind imagenet-vid-robust)"
        )
    embeddings, emb_meta = load_embeddings(emb_path, len(testset.images), "frame")
    weights, clf_meta = classifier.load(clf_path, testset.classes)
    model = same_model(emb_path, emb_meta, (clf_path, clf_meta))
    predicted = classifier.scores(embeddings, weights, clf_meta).argmax(axis=1)
    entries = [{**e, "labels": e.get("labels", [e["label"]])} for e in testset.images]
    outcomes = anchor_outcomes(entries, predicted, k_max)
    values = [100.0 * float(np.mean(outcomes.column(f"pm{k}"))) for k in range(k_max + 1)]
    anchors = {e["anchor"] for e in entries}
    record = assemble(
        "video",
        dataset={
            "name": testset.dataset,
            "kind": testset.kind,
            "n_images": len(anchors),
            "n_frames": len(entries),
            "n_classes": len(testset.classes),
        },
        condition=evaluation.condition,
        metrics={
            **{f"pm{k}": value for k, value in enumerate(values)},
            "drop": values[0] - values[-1],
        },
        provenance=provenance.build(
            "evaluate-video",
            {
                "k": k_max,
                "correct": "top-1 in the frame's own labels",
                # an ImageNet classifier's 1000 logits to the set's classes: imagenet-testbed's max
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
