"""`vlstress ood-detect`: out-of-distribution detection of one model, in-distribution test set vs
one OOD set.

Both sets are scored against the in-distribution classifier (vlstress.zeroshot.ood), from
embeddings already computed. One record per score (task `ood`, condition {ood, score}):
AUROC, FPR at 95% TPR, AUPR-In, AUPR-Out (%). The ROC curves go to the sidecar and the
figure --out-fig.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from vlstress.argtypes import positive_float

log = logging.getLogger(__name__)


def score_list(value: str) -> list[str]:
    from vlstress.suites.ood.scores import SCORES

    names = [part.strip() for part in str(value).split(",") if part.strip()]
    unknown = [name for name in names if name not in SCORES]
    if not names or unknown:
        raise argparse.ArgumentTypeError(
            f"scores must be comma-separated names among {', '.join(SCORES)}, got {value!r}"
        )
    return list(dict.fromkeys(names))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--testset", required=True, type=Path, help="in-distribution test set (folder or manifest)"
    )
    parser.add_argument(
        "--image-emb",
        required=True,
        type=Path,
        help="its image embeddings (`vlstress embed-testset`)",
    )
    parser.add_argument(
        "--classifier", required=True, type=Path, help="its zero-shot classifier (same model)"
    )
    parser.add_argument(
        "--ood-testset",
        required=True,
        type=Path,
        help="the out-of-distribution set (folder or manifest)",
    )
    parser.add_argument(
        "--ood-emb", required=True, type=Path, help="its image embeddings (same model)"
    )
    parser.add_argument(
        "--scores",
        type=score_list,
        default=["mcm", "msp", "max_logit", "energy"],
        help="comma-separated OOD scores",
    )
    parser.add_argument(
        "--temperature",
        type=positive_float,
        default=1.0,
        help="T of MCM (softmax of cosine / T) and of the energy",
    )
    parser.add_argument(
        "--out", required=True, type=Path, help="records file (ROC curves in <out>.json)"
    )
    parser.add_argument(
        "--out-fig", required=True, type=Path, help="ROC curves (PNG, PDF beside it)"
    )


def run(args: argparse.Namespace) -> None:
    import numpy as np

    from vlstress import provenance
    from vlstress.embedding.files import load_embeddings, same_model
    from vlstress.errors import VlstressError
    from vlstress.io import sha256_file, sidecar, write_json
    from vlstress.record import assemble, write_records
    from vlstress.report import figures
    from vlstress.suites.ood import scores as ood
    from vlstress.suites.ood.roc import roc_figure
    from vlstress.suites.zeroshot import classifier
    from vlstress.testsets import manifest as testsets

    ident = testsets.load(args.testset)
    outside = testsets.load(args.ood_testset)
    shared = sorted(set(ident.classes) & set(outside.classes))
    if shared:
        raise VlstressError(
            f"OOD set {outside.dataset} shares class(es) with the in-distribution set "
            f"{ident.dataset}: {', '.join(shared[:5])}; drop them from the OOD set (--drop)"
        )
    id_emb, id_meta = load_embeddings(args.image_emb, len(ident.images), "in-distribution image")
    ood_emb, ood_meta = load_embeddings(args.ood_emb, len(outside.images), "OOD image")
    weights, clf_meta = classifier.load(args.classifier, ident.classes)
    model = same_model(
        args.image_emb, id_meta, (args.ood_emb, ood_meta), (args.classifier, clf_meta)
    )
    scale = classifier.logit_scale(args.classifier, clf_meta)
    id_cos = id_emb.astype(np.float64) @ weights.T.astype(np.float64)
    ood_cos = ood_emb.astype(np.float64) @ weights.T.astype(np.float64)
    inputs = [
        testsets.manifest_path(args.testset),
        args.image_emb,
        args.classifier,
        testsets.manifest_path(args.ood_testset),
        args.ood_emb,
    ]
    block = provenance.build(
        "ood-detect",
        {
            "scores": args.scores,
            "temperature": args.temperature,
            "logit_scale": scale,
            "positive": "in-distribution",
        },
        seed=id_meta["provenance"].get("seed"),
        model=model,
        device=id_meta["provenance"].get("device"),
        inputs={str(p): sha256_file(p) for p in inputs},
        packages=("scikit-learn",),
    )
    records, curves, roc = [], {}, {}
    for name in args.scores:
        id_scores = ood.score(name, id_cos, scale, args.temperature)
        ood_scores = ood.score(name, ood_cos, scale, args.temperature)
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
        points = ood.roc_points(id_scores, ood_scores)
        roc[name] = {**points, "auroc": metrics["auroc"], "fpr95": metrics["fpr95"]}
        curves[name] = (points["fpr"], points["tpr"], metrics["auroc"])
        log.info(
            "%s %s vs %s, %s: AUROC %.1f%%, FPR@95 %.1f%%",
            model["slug"],
            ident.dataset,
            outside.dataset,
            name,
            metrics["auroc"],
            metrics["fpr95"],
        )
    write_records(args.out, records)
    write_json(
        sidecar(args.out),
        {"kind": "ood-roc", "in_distribution": ident.dataset, "ood": outside.dataset, "roc": roc},
    )
    figures.setup()
    title = (
        f"{model['slug']}: {ident.dataset} (ID, {len(ident.images)}) vs {outside.dataset} (OOD, "
        f"{len(outside.images)})"
    )
    figures.save(roc_figure(title, curves), args.out_fig, block)
