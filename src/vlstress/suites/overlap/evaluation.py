"""The work of `vlstress evaluate-overlap`: a model's zero-shot top-1 on the test images flagged as
near-duplicates of training images and on the rest, per test set (task `overlap`, condition
{set}). The flags are the detector's (one detector for every model, so the subsets are the same
for all). Beside each record, its per-image outcomes (`image_outcomes`): whether the top-1 is
right, which subset the image is in (`overlap` or `clean`) and its class, so two models' clean
top-1s are compared on the same images (McNemar)."""

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
from vlstress.suites.zeroshot import classifier
from vlstress.suites.zeroshot.paths import Evaluation
from vlstress.testsets import manifest as testsets


def subset_metrics(correct: np.ndarray, flagged: np.ndarray) -> dict[str, float | None]:
    """Top-1 (%) on the flagged images, on the others and on all, and the counts."""
    correct, flagged = np.asarray(correct, bool), np.asarray(flagged, bool)
    if correct.shape != flagged.shape:
        raise VlstressError(f"{len(flagged)} flags for {len(correct)} images")

    def top1(mask):
        return 100.0 * float(correct[mask].mean()) if mask.any() else None

    overlap, clean = top1(flagged), top1(~flagged)
    return {
        "top1": top1(np.ones_like(flagged)),
        "top1_overlap": overlap,
        "top1_clean_subset": clean,
        "gap": None if overlap is None or clean is None else overlap - clean,
        "n_overlap": float(flagged.sum()),
        "n_clean_subset": float((~flagged).sum()),
        "overlap_share": 100.0 * float(flagged.mean()),
    }


SUBSETS = ("clean", "overlap")  # an image's subset: index 0 not flagged, 1 flagged


def image_outcomes(correct: np.ndarray, flagged: np.ndarray, labels: np.ndarray) -> Outcomes:
    """One record's images in the test set's order: `correct` (top-1), `subset` (`overlap` where
    the detector flagged it, else `clean`: what top1_clean_subset counts), `label`."""
    flagged = np.asarray(flagged, dtype=bool)
    return Outcomes(
        "image",
        {
            "correct": np.asarray(correct, dtype=bool),
            "subset": np.array(SUBSETS)[flagged.astype(np.int64)],
            "label": np.asarray(labels, dtype=np.int64),
        },
    )


def evaluate(
    evaluation: Evaluation, detected: dict[str, Any], detected_path: Path
) -> tuple[Record, Outcomes]:
    """A model's record on one test set and its per-image outcomes."""
    name = evaluation.condition["set"]
    folder, emb_path, clf_path = (Path(p) for p in evaluation.paths())
    if name not in detected["testsets"]:
        raise VlstressError(f"{detected_path} has no flags for test set {name!r}: rerun detection")
    testset = testsets.load(folder)
    embeddings, emb_meta = load_embeddings(emb_path, len(testset.images), "test-set image")
    weights, clf_meta = classifier.load(clf_path, testset.classes)
    model = same_model(emb_path, emb_meta, (clf_path, clf_meta))
    flags = np.array(detected["testsets"][name]["flagged"], dtype=bool)
    scores = classifier.scores(embeddings, weights, clf_meta)
    correct = scores.argmax(axis=1) == np.array(testset.labels)
    record = assemble(
        "overlap",
        dataset={
            "name": testset.dataset,
            "kind": testset.kind,
            "n_images": len(testset.images),
            "n_classes": len(testset.classes),
        },
        condition={"set": name},
        metrics=subset_metrics(correct, flags),
        provenance=provenance.build(
            "evaluate-overlap",
            {
                "threshold": detected["threshold"],
                "threshold_from": detected["threshold_from"],
                "detector": detected["provenance"]["model"],
                "n_train": detected["n_train"],
            },
            seed=emb_meta["provenance"]["seed"],
            model=model,
            device=emb_meta["provenance"]["device"],
            inputs={
                str(p): sha256_file(p)
                for p in (testsets.manifest_path(folder), emb_path, clf_path, detected_path)
            },
        ),
    )
    return record, image_outcomes(correct, flags, np.array(testset.labels))
