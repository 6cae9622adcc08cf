"""The work of `vlstress prompt-ablation`: zero-shot accuracy, calibration and OOD detection of one
model as the number of prompt templates grows.

For each zero-shot test set and each template count k (1, 2, 4, ... and the set's size, or
`prompts.counts`), `seeds` subsets of k templates are drawn (seeded by (seed, k, size):
`counts.subset`); each subset's classifier is the normalised mean of its per-template text
embeddings (`text.average`, the zero-shot classifier's own formula), so no text is embedded again.
Records (one per (set, k, seed): the seed is the replicate the summary averages, mean and std):
- task `prompt_count`, condition {set, templates: k, seed}: top-1 (%), ECE (%, torchmetrics'
  equal-width l1 ECE computed in NumPy as in the calibration suite, logits = the model's logit
  scale x cosine) and NLL;
- task `prompt_count_ood`, condition {set, ood, templates: k, seed}: AUROC and FPR@95 (%) of MCM
  (max softmax of cosine / T, T = 1; `vlstress.suites.ood.scores`) of the test set against each
  OOD set of the ood suite that shares no class with it (when that suite is on).
The subsets go to the sidecar, each record's per-image outcomes beside the records (one block per
record: `correct` and `label` of a `prompt_count` record; the MCM `score` and `is_ood` of a
`prompt_count_ood` one, in- then out-of-distribution images, as the OOD suite keeps them).
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
from vlstress.params import Params
from vlstress.record import Record, assemble
from vlstress.suites.ood import paths as ood_paths
from vlstress.suites.prompts import paths, text
from vlstress.suites.prompts.counts import subset, template_counts
from vlstress.suites.zeroshot.metrics import classification_metrics, softmax, true_class_rank
from vlstress.testsets import manifest as testsets
from vlstress.testsets.manifest import shared_classes
from vlstress.workflow.paths import (
    CLASSIFIER,
    CLASSIFIERS,
    TESTSET,
    TESTSET_EMB,
    ZEROSHOT_EMB,
)

MCM_TEMPERATURE = 1.0


def calibration_error(logits: np.ndarray, labels: np.ndarray, bins: int) -> float:
    """Expected calibration error of the softmax of `logits` (`bins` equal-width bins, l1; a
    fraction), as the calibration suite computes it (torchmetrics' ECE, in NumPy)."""
    from vlstress.suites.calibration.calibration import calibration_error as ece

    return ece(softmax(logits), np.asarray(labels, dtype=np.int64), bins)


def classification(
    cosines: np.ndarray, labels: np.ndarray, scale: float, bins: int
) -> dict[str, float | None]:
    """Top-1 (%), ECE (%, `bins` equal-width bins) and NLL (nats) of cosines images x classes, the
    logits being `scale` x cosine."""
    labels = np.asarray(labels, dtype=np.int64)
    values, _ = classification_metrics(cosines, labels.tolist(), ks=[1])
    logits = scale * np.asarray(cosines, dtype=np.float64)
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return {
        "top1": values["top1"],
        "ece": 100.0 * calibration_error(logits, labels, bins),
        "nll": float(-log_probs[np.arange(len(labels)), labels].mean()),
    }


def detection(id_cosines: np.ndarray, ood_cosines: np.ndarray) -> tuple[dict[str, float], Outcomes]:
    """AUROC and FPR@95 (%) of MCM at T = 1, in-distribution positive, and the images' scores."""
    from vlstress.suites.ood import scores
    from vlstress.suites.ood.resampling import image_outcomes

    inside = scores.score("mcm", id_cosines, 1.0, MCM_TEMPERATURE)
    outside = scores.score("mcm", ood_cosines, 1.0, MCM_TEMPERATURE)
    metrics = scores.detection_metrics(inside, outside)
    return {"auroc": metrics["auroc"], "fpr95": metrics["fpr95"]}, image_outcomes(inside, outside)


def classification_outcomes(cosines: np.ndarray, labels: np.ndarray) -> Outcomes:
    """Per image: right as the top-1 counts it (`true_class_rank` 0), and its class."""
    labels = np.asarray(labels, dtype=np.int64)
    return Outcomes(
        "image", {"correct": true_class_rank(np.asarray(cosines), labels) == 0, "label": labels}
    )


@dataclass(frozen=True)
class Ablation:
    """What `vlstress prompt-ablation` writes: records and the subsets drawn (the sidecar)."""

    records: list[Record]
    subsets: dict[str, Any]
    outcomes: list[Outcomes]  # one block per record, in the records' order


def _images(folder: Path, emb: Path) -> tuple[testsets.ClassificationSet, np.ndarray, dict]:
    found = testsets.load(folder)
    vectors, meta = load_embeddings(emb, len(found.images), "image")
    return found, vectors.astype(np.float64), meta


def ablate(
    params: Params,
    *,
    model_slug: str,
    counts: list[int] | None,
    seeds: int,
    seed: int,
    bins: int,
    log: logging.Logger,
) -> Ablation:
    """Every test set of the params, every count, `seeds` subsets each (`log`: the command's
    logger, one line per count)."""
    names = paths.testsets(params)
    if not names:
        raise VlstressError("the params switch the prompts or the zeroshot suite off: no test set")
    emb = Path(ZEROSHOT_EMB.format(model=model_slug))
    folder = Path(CLASSIFIERS.format(model=model_slug))
    outside = {
        name: _images(
            Path(ood_paths.OOD_SET.format(oodset=name)), emb / ood_paths.OOD_EMB.format(oodset=name)
        )
        for name in ood_paths.names(params)
    }
    inputs: dict[str, str] = {}
    # (task, dataset, condition, metrics, per-image outcomes)
    pending: list[tuple[str, dict, dict, dict, Outcomes]] = []
    subsets: dict[str, Any] = {}
    model, scale = None, None
    for name in names:
        testset, images, image_meta = _images(
            Path(TESTSET.format(testset=name)), emb / TESTSET_EMB.format(testset=name)
        )
        per_template_path = paths.per_template(folder / CLASSIFIER.format(testset=name))
        rows, meta = text.load(per_template_path, testset.classes)
        found_model = same_model(
            per_template_path,
            meta,
            (emb / TESTSET_EMB.format(testset=name), image_meta),
            *((emb / ood_paths.OOD_EMB.format(oodset=o), m) for o, (_, _, m) in outside.items()),
        )
        if model is not None and found_model != model:
            raise VlstressError(f"{per_template_path} comes from another model than the other sets")
        model, scale = found_model, float(meta["logit_scale"])
        labels = np.asarray([entry["label"] for entry in testset.images])
        n_templates = rows.shape[1]
        chosen_counts = template_counts(counts, n_templates, str(meta.get("templates_source")))
        pairs = [o for o, (other, _, _) in outside.items() if not shared_classes(other, testset)]
        for path in (testsets.manifest_path(TESTSET.format(testset=name)), per_template_path):
            inputs[str(path)] = sha256_file(path)
        inputs[str(emb / TESTSET_EMB.format(testset=name))] = sha256_file(
            emb / TESTSET_EMB.format(testset=name)
        )
        dataset = {
            "name": testset.dataset,
            "kind": testset.kind,
            "n_images": len(testset.images),
            "n_classes": len(testset.classes),
            "n_templates": n_templates,
        }
        subsets[name] = {"templates": meta["templates"], "subsets": {}}
        for k in chosen_counts:
            drawn = {s: subset(n_templates, k, s) for s in range(seed, seed + seeds)}
            subsets[name]["subsets"][str(k)] = {str(s): chosen for s, chosen in drawn.items()}
            top1: list[float] = []
            for s, chosen in drawn.items():
                weights = text.average(rows, chosen)
                cosines = images @ weights.T
                values = classification(cosines, labels, scale, bins)
                top1.append(values["top1"] or 0.0)
                condition = {"set": name, "templates": k, "seed": s}
                pending.append(
                    (
                        "prompt_count",
                        dataset,
                        condition,
                        values,
                        classification_outcomes(cosines, labels),
                    )
                )
                for o in pairs:
                    other, ood_images, _ = outside[o]
                    detected, scored = detection(cosines, ood_images @ weights.T)
                    pending.append(
                        (
                            "prompt_count_ood",
                            {**dataset, "ood": other.dataset, "n_ood_images": len(other.images)},
                            {"set": name, "ood": o, "templates": k, "seed": s},
                            detected,
                            scored,
                        )
                    )
            log.info(
                "%s %s, %d of %d templates: top-1 %.1f%% (mean of %d subsets)",
                model_slug,
                name,
                k,
                n_templates,
                float(np.mean(top1)),
                len(drawn),
            )
    for o, (other, _, _) in outside.items():
        inputs[str(testsets.manifest_path(ood_paths.OOD_SET.format(oodset=o)))] = sha256_file(
            testsets.manifest_path(ood_paths.OOD_SET.format(oodset=o))
        )
        inputs[str(emb / ood_paths.OOD_EMB.format(oodset=o))] = sha256_file(
            emb / ood_paths.OOD_EMB.format(oodset=o)
        )
    block = provenance.build(
        "prompt-ablation",
        {
            "model": model_slug,
            "counts": counts,
            "seeds": seeds,
            "seed": seed,
            "bins": bins,
            "logit_scale": scale,
            "mcm_temperature": MCM_TEMPERATURE,
        },
        seed=seed,
        model=model,
        inputs=inputs,
        packages=("scikit-learn",),
    )
    records = [
        assemble(task, dataset=dataset, condition=condition, metrics=metrics, provenance=block)
        for task, dataset, condition, metrics, _ in pending
    ]
    return Ablation(
        records, {"kind": "prompt-subsets", "sets": subsets}, [found for *_, found in pending]
    )
