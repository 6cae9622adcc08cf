"""The work of `vlstress autoclip`: AutoCLIP beside plain template averaging on every zero-shot
evaluation of one model.

The evaluations are those the params produce (`evaluations(params)` of each given module: every
clean test set, each corruption at each severity, the typographic copy), read from their image
embeddings and the per-template text embeddings of their test set, so nothing is encoded again.
One record per evaluation (task `autoclip`, the evaluation's condition): top-1 (%) with the
averaged classifier (`top1_average`: the normalised mean of the template embeddings, the
zero-shot suite's classifier), with AutoCLIP's per-image weights (`top1_autoclip`), the gain
(points), and the mean of each image's largest template weight (`max_weight`; 1 / templates
when the weights stay uniform). `top1_uniform` scores with AutoCLIP's formula at uniform weights
(the mean of the template cosines, i.e. the unnormalised mean embedding): AutoCLIP minus it is the
effect of the weighting alone, it minus `top1_average` that of dropping the normalisation.
Beside the records, each one's per-image outcomes (`resampling.autoclip_outcomes`): the gain's
interval is a paired bootstrap over the images.
"""

from __future__ import annotations

import importlib
import logging
from pathlib import Path

import numpy as np

from vlstress import provenance
from vlstress.embedding.files import load_embeddings, same_model
from vlstress.errors import VlstressError
from vlstress.io import sha256_file
from vlstress.outcomes import Outcomes
from vlstress.params import Params
from vlstress.record import Record, assemble
from vlstress.suites.prompts import autoclip, paths, text
from vlstress.suites.prompts.resampling import autoclip_outcomes
from vlstress.suites.zeroshot.metrics import classification_metrics, true_class_rank
from vlstress.testsets import manifest as testsets


def compare(
    images: np.ndarray, labels: np.ndarray, per_template: np.ndarray, beta: float
) -> tuple[dict[str, float | None], Outcomes]:
    """Top-1 (%) of the averaged classifier and of AutoCLIP, the gain, and the mean largest
    weight; the per-image outcomes of the three classifiers."""
    images = np.asarray(images, dtype=np.float64)
    averaged = images @ text.average(per_template).T
    uniform = images @ np.asarray(per_template, dtype=np.float64).mean(axis=1).T
    weighted, weights = autoclip.scores(images, per_template, beta)
    top1 = {
        name: classification_metrics(found, labels.tolist(), ks=[1])[0]["top1"]
        for name, found in (("average", averaged), ("uniform", uniform), ("autoclip", weighted))
    }
    top1_average, top1_autoclip = top1["average"], top1["autoclip"]
    assert top1_average is not None and top1_autoclip is not None
    truth = np.asarray(labels)
    # right as the top-1 counts it (ties go to the true class: `true_class_rank`)
    hits = [true_class_rank(found, truth) == 0 for found in (averaged, uniform, weighted)]
    outcomes = autoclip_outcomes(hits[0], hits[1], hits[2], truth)
    metrics = {
        "top1_average": top1_average,
        "top1_uniform": top1["uniform"],
        "top1_autoclip": top1_autoclip,
        "gain": top1_autoclip - top1_average,
        "max_weight": float(weights.max(axis=1).mean()),
    }
    return metrics, outcomes


def evaluate(
    params: Params,
    *,
    params_files: list[Path],
    model_slug: str,
    modules: list[str],
    beta: float,
    log: logging.Logger,
) -> tuple[list[Record], list[Outcomes]]:
    """One record per evaluation and its per-image outcomes (`log`: the command's logger, one line
    each)."""
    found = [e for module in modules for e in importlib.import_module(module).evaluations(params)]
    if not found:
        raise VlstressError("the params produce no zero-shot evaluation: no set for AutoCLIP")
    evaluations = [e.for_model(model_slug) for e in found]
    inputs: dict[str, str] = {}
    pending, model = [], None
    for e in evaluations:
        testset = testsets.load(e.testset)
        embeddings, emb_meta = load_embeddings(
            Path(e.embeddings), len(testset.images), "test-set image"
        )
        per_template_path = paths.per_template(e.classifier)
        rows_text, meta = text.load(per_template_path, testset.classes)
        found_model = same_model(per_template_path, meta, (Path(e.embeddings), emb_meta))
        if model is not None and found_model != model:
            raise VlstressError(f"{e.embeddings} comes from another model than the other sets")
        model = found_model
        rows = list(range(len(testset.images)))
        if "severity" in e.condition:
            rows = [
                i
                for i, entry in enumerate(testset.images)
                if entry.get("severity") == e.condition["severity"]
            ]
        labels = np.asarray([testset.images[i]["label"] for i in rows])
        metrics, outcomes = compare(embeddings[rows], labels, rows_text, beta)
        for path in (testsets.manifest_path(e.testset), Path(e.embeddings), per_template_path):
            inputs[str(path)] = sha256_file(path)
        dataset = {
            "name": testset.dataset,
            "kind": testset.kind,
            "n_images": len(rows),
            "n_classes": len(testset.classes),
            "n_templates": int(rows_text.shape[1]),
        }
        pending.append((dataset, dict(e.condition), metrics, outcomes))
        log.info(
            "%s %s: top-1 %.1f%% averaged, %.1f%% AutoCLIP (%d templates)",
            model_slug,
            e.condition,
            metrics["top1_average"],
            metrics["top1_autoclip"],
            rows_text.shape[1],
        )
    block = provenance.build(
        "autoclip",
        {
            "params": [str(p) for p in params_files],
            "model": model_slug,
            "beta": beta,
            "method": "one gradient step on logsumexp of the cosine class scores, entropy-matched",
        },
        model=model,
        inputs=inputs,
    )
    records = [
        assemble(
            "autoclip", dataset=dataset, condition=condition, metrics=metrics, provenance=block
        )
        for dataset, condition, metrics, _ in pending
    ]
    return records, [outcomes for *_, outcomes in pending]
