"""`vlstress evaluate-zeroshot`: zero-shot classification metrics of one model on one test set.

Scores = image embeddings x classifier weights (cosine). The record (task `zeroshot`,
`corruption` or `typographic`) holds top-1, top-5, mean per-class recall, and, given the
clean test set's record, the clean accuracy and the drop; a set with written class names
(typographic attacks) adds the attack success rate. The record's sidecar
(`<record>.json` + `.json`) holds the per-class accuracy.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from vlstress import provenance
from vlstress.argtypes import int_list, optional_path
from vlstress.embedding.files import load_embeddings, same_model
from vlstress.errors import VlstressError
from vlstress.io import sha256_file, sidecar, write_json
from vlstress.record import assemble, read_record, write_record
from vlstress.suites.zeroshot import classifier, metrics
from vlstress.testsets import manifest as testsets

TASKS = ("zeroshot", "corruption", "typographic")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--testset",
        required=True,
        type=Path,
        help="test-set folder (or manifest) the embeddings were computed on",
    )
    parser.add_argument(
        "--image-emb", required=True, type=Path, help="from `vlstress embed-testset`"
    )
    parser.add_argument(
        "--classifier",
        required=True,
        type=Path,
        help="from `vlstress zeroshot-classifier` (same model, same classes)",
    )
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
    parser.add_argument(
        "--ks", type=int_list, default=[1, 5], help="top-k accuracies, comma-separated"
    )
    parser.add_argument(
        "--out", required=True, type=Path, help="record to write (per-class sidecar: <out>.json)"
    )


def run(args: argparse.Namespace) -> None:
    testset = testsets.load(args.testset)
    embeddings, emb_meta = load_embeddings(args.image_emb, len(testset.images), "test-set image")
    weights, clf_meta = classifier.load(args.classifier, testset.classes)
    model = same_model(args.image_emb, emb_meta, (args.classifier, clf_meta))
    rows = list(range(len(testset.images)))
    condition: dict = {}
    if args.task == "corruption":
        if args.corruption is None or args.severity is None:
            raise VlstressError("task corruption needs --corruption and --severity")
        rows = [
            i for i, entry in enumerate(testset.images) if entry.get("severity") == args.severity
        ]
        if not rows:
            raise VlstressError(
                f"test set {args.testset} has no images of severity {args.severity}"
            )
        condition = {"corruption": args.corruption, "severity": args.severity}
    elif args.task == "typographic":
        condition = {"attack": "typographic"}
    entries = [testset.images[i] for i in rows]
    labels = [entry["label"] for entry in entries]
    written = [entry.get("written") for entry in entries]
    has_written = all(w is not None for w in written)
    if args.task == "typographic" and not has_written:
        raise VlstressError(
            f"test set {args.testset} has no written class names: not a typographic set"
        )
    scores = embeddings[rows] @ weights.T
    values, per_class = metrics.classification_metrics(
        scores,
        labels,
        ks=args.ks,
        written=[w for w in written if w is not None] if has_written else None,
    )
    if args.clean_record is not None:
        clean = read_record(args.clean_record)
        top1 = values["top1"]
        if top1 is None:  # top-1 is defined for any test set with at least one class
            raise VlstressError(f"test set {args.testset}: no top-1 accuracy to compare")
        values.update(metrics.shift_metrics(top1, clean.metrics.get("top1")))
    inputs = [
        testsets.manifest_path(args.testset),
        args.image_emb,
        args.classifier,
        *([args.clean_record] if args.clean_record else []),
    ]
    write_record(
        args.out,
        assemble(
            args.task,
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
                {"ks": args.ks, "task": args.task, "templates": clf_meta.get("templates_source")},
                seed=emb_meta["provenance"]["seed"],
                model=model,
                device=emb_meta["provenance"]["device"],
                inputs={str(p): sha256_file(p) for p in inputs},
            ),
        ),
    )
    counts = [sum(1 for label in labels if label == c) for c in range(len(testset.classes))]
    write_json(
        sidecar(args.out),
        {
            "kind": "per-class-accuracy",
            "classes": testset.classes,
            "top1": per_class,
            "n_images": counts,
        },
    )
