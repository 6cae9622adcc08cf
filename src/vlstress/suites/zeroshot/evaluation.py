"""Zero-shot classification metrics of one model on one test set (`vlstress evaluate-zeroshot`).

Scores = image embeddings x classifier weights (cosine). The record (task `zeroshot`,
`corruption`, `typographic` or `stylized`) holds top-1, top-5, mean per-class recall, and, given the
clean test set's record, the clean accuracy and the drop; a set with written class names
(typographic attacks) adds the attack success rate. The per-class accuracy goes to the
record's sidecar. Also the command's flags of the task and its condition
(`add_condition_arguments`).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlstress import provenance
from vlstress.argtypes import optional_path
from vlstress.embedding.files import load_embeddings, same_model
from vlstress.errors import VlstressError
from vlstress.io import sha256_file, sidecar, write_json
from vlstress.outcomes import Outcomes, outcomes_path, write_outcomes
from vlstress.record import Record, assemble, read_record, write_record
from vlstress.suites.zeroshot import classifier, metrics
from vlstress.testsets import manifest as testsets

TASKS = ("zeroshot", "corruption", "typographic", "stylized")


@dataclass(frozen=True)
class Evaluation:
    """One zero-shot evaluation: its record, the per-class accuracy (the record's sidecar) and the
    per-image outcomes (`vlstress.outcomes`, the record's outcomes file)."""

    record: Record
    per_class: dict[str, Any]
    outcomes: Outcomes

    def write(self, path: Path) -> None:
        """The record at `path`, its per-class sidecar and its outcomes file beside it."""
        write_record(path, self.record)
        write_json(sidecar(path), self.per_class)
        write_outcomes(outcomes_path(path), [self.outcomes])


def add_condition_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of `evaluate-zeroshot` that decide what is evaluated: the task and its condition
    (corruption and severity), and the clean record the drop is measured against."""
    parser.add_argument("--task", choices=TASKS, default="zeroshot")
    parser.add_argument(
        "--corruption",
        default=None,
        help="corruption name (task corruption): part of the condition",
    )
    parser.add_argument(
        "--severity",
        type=int,
        default=None,
        help="keep the images of this severity (task corruption)",
    )
    parser.add_argument(
        "--clean-record",
        type=optional_path,
        default=None,
        help="record of the clean test set: clean accuracy and drop",
    )


def evaluate(
    testset_path: Path,
    image_emb: Path,
    classifier_path: Path,
    *,
    task: str,
    corruption: str | None,
    severity: int | None,
    clean_record: Path | None,
    ks: list[int],
) -> Evaluation:
    """The record of one zero-shot evaluation, its per-class sidecar (accuracy per class) and its
    per-image outcomes.

    Task `corruption` keeps the images of `severity` (both it and `corruption` are needed);
    task `typographic` needs a set with written class names; `clean_record`, when given, adds
    the clean accuracy and the drop."""
    testset = testsets.load(testset_path)
    embeddings, emb_meta = load_embeddings(image_emb, len(testset.images), "test-set image")
    weights, clf_meta = classifier.load(classifier_path, testset.classes)
    model = same_model(image_emb, emb_meta, (classifier_path, clf_meta))
    rows = list(range(len(testset.images)))
    condition: dict = {}
    if task == "corruption":
        if corruption is None or severity is None:
            raise VlstressError("task corruption needs --corruption and --severity")
        rows = [i for i, entry in enumerate(testset.images) if entry.get("severity") == severity]
        if not rows:
            raise VlstressError(f"test set {testset_path} has no images of severity {severity}")
        condition = {"corruption": corruption, "severity": severity}
    elif task == "typographic":
        condition = {"attack": "typographic"}
    elif task == "stylized":  # a stylized copy (vlstress.suites.stylized): its AdaIN alpha
        if testset.kind != "stylized":
            raise VlstressError(f"test set {testset_path} is of kind {testset.kind}, not stylized")
        networks = (testset.source.get("weights") or {}).get("weights_label")
        condition = {
            "shift": "stylized",
            "alpha": testset.source.get("alpha"),
            "networks": networks,
        }
    entries = [testset.images[i] for i in rows]
    labels = [entry["label"] for entry in entries]
    written = [entry.get("written") for entry in entries]
    has_written = all(w is not None for w in written)
    if task == "typographic" and not has_written:
        raise VlstressError(
            f"test set {testset_path} has no written class names: not a typographic set"
        )
    scores = classifier.scores(embeddings[rows], weights, clf_meta)
    written_ids = [w for w in written if w is not None] if has_written else None
    values, per_class = metrics.classification_metrics(scores, labels, ks=ks, written=written_ids)
    if clean_record is not None:
        clean = read_record(clean_record)
        top1 = values["top1"]
        if top1 is None:  # top-1 is defined for any test set with at least one class
            raise VlstressError(f"test set {testset_path}: no top-1 accuracy to compare")
        values.update(metrics.shift_metrics(top1, clean.metrics.get("top1")))
    inputs = [
        testsets.manifest_path(testset_path),
        image_emb,
        classifier_path,
        *([clean_record] if clean_record else []),
    ]
    record = assemble(
        task,
        dataset={
            "name": testset.dataset,
            "kind": testset.kind,
            "n_images": len(rows),
            "n_classes": len(testset.classes),
        },
        condition=condition,
        metrics=values,
        provenance=provenance.build(
            "evaluate-zeroshot",
            {
                "ks": ks,
                "task": task,
                "templates": clf_meta.get("templates_source"),
                # a supervised ImageNet classifier's rule from 1000 logits to the set's classes
                **(
                    {"class_map_rule": clf_meta["class_map_rule"]}
                    if "class_map_rule" in clf_meta
                    else {}
                ),
            },
            seed=emb_meta["provenance"]["seed"],
            model=model,
            device=emb_meta["provenance"]["device"],
            inputs={str(p): sha256_file(p) for p in inputs},
        ),
    )
    counts = [sum(1 for label in labels if label == c) for c in range(len(testset.classes))]
    per_class_sidecar = {
        "kind": "per-class-accuracy",
        "classes": testset.classes,
        "top1": per_class,
        "n_images": counts,
    }
    outcomes = Outcomes("image", metrics.item_outcomes(scores, labels, written_ids))
    return Evaluation(record, per_class_sidecar, outcomes)
