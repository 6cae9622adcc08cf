"""The work of `vlstress calibrate`: one model's zero-shot softmax, calibrated on every set of the
run.

The sets are the zero-shot evaluations the params produce (`evaluations(params)` of each given
module), read from their embeddings and classifiers, so nothing is encoded again. A temperature is
fitted on a seeded split of the in-distribution set (the fit split) and applied unchanged to the
held-out rest and to every other set. One record per set (task `calibration`): top-1, confidence,
ECE, NLL and Brier, raw and scaled (`_ts`), and two flags of the fit in every record (1 or 0):
`temperature_at_bound` (T on the search bound) and `temperature_worsens_held_out_nll` (T raises
the held-out ID NLL above T = 1's); per record the outcomes of the images its metrics are computed
on (`Calibration.outcomes`, vlstress.suites.calibration.resampling); the reliability bins of every
set (`Calibration.bins`) and the panels of the reliability diagrams (held-out ID set, shifted sets
pooled).
"""

from __future__ import annotations

import importlib
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vlstress import provenance
from vlstress.errors import VlstressError
from vlstress.io import sha256_file
from vlstress.outcomes import Outcomes
from vlstress.params import Params
from vlstress.record import Record, assemble, record_model, weights_short
from vlstress.suites.calibration import calibration as cal
from vlstress.suites.calibration.bounds import at_bound, worsens
from vlstress.suites.calibration.resampling import image_outcomes


def evaluation_logits(evaluation):
    """(logits, labels, testset, model block) of one evaluation."""
    from vlstress.embedding.files import load_embeddings, same_model
    from vlstress.suites.zeroshot import classifier
    from vlstress.testsets import manifest as testsets

    testset = testsets.load(evaluation.testset)
    embeddings, emb_meta = load_embeddings(
        Path(evaluation.embeddings), len(testset.images), "test-set image"
    )
    weights, clf_meta = classifier.load(Path(evaluation.classifier), testset.classes)
    model = same_model(
        Path(evaluation.embeddings), emb_meta, (Path(evaluation.classifier), clf_meta)
    )
    rows = list(range(len(testset.images)))
    if "severity" in evaluation.condition:
        rows = [
            i
            for i, entry in enumerate(testset.images)
            if entry.get("severity") == evaluation.condition["severity"]
        ]
    scale = classifier.logit_scale(Path(evaluation.classifier), clf_meta)
    labels = [testset.images[i]["label"] for i in rows]
    return (
        scale
        * classifier.scores(
            embeddings[rows].astype("float64"), weights.astype("float64"), clf_meta
        ),
        labels,
        testset,
        model,
    )


@dataclass(frozen=True)
class Calibration:
    """What `vlstress calibrate` writes: records, their per-image outcomes (block i for record i),
    reliability bins (the sidecar), diagram panels."""

    records: list[Record]
    outcomes: list[Outcomes]
    bins: dict[str, Any]
    panels: list[tuple]
    temperature: float
    model: dict[str, Any]
    block: dict[str, Any]
    at_bound: bool = False  # T on the search bound
    held_out_nll: tuple[float, float] = (0.0, 0.0)  # held-out ID NLL at T = 1 and at T

    @property
    def worsens_held_out_nll(self) -> bool:
        """Whether T raises the held-out ID NLL above T = 1's."""
        return worsens(*self.held_out_nll)

    def figure(self):
        """The reliability diagrams (matplotlib figure)."""
        from vlstress.suites.calibration.reliability import fit_flags, reliability_figure

        model = self.model
        label = f"{model['arch']} ({weights_short(model, record_model(model)['weights'])})"
        flags = fit_flags(
            self.temperature,
            self.at_bound,
            self.held_out_nll if self.worsens_held_out_nll else None,
        )
        return reliability_figure(label, self.temperature, self.panels, flags)


def calibrate(
    params: Params,
    *,
    params_files: list[Path],
    model_slug: str,
    modules: list[str],
    in_distribution: str,
    fit_fraction: float,
    seed: int,
    n_bins: int,
    log: logging.Logger,
) -> Calibration:
    """Fit T on the fit split of `in_distribution`, score every set raw and scaled (`log`: the
    command's logger)."""
    found = [e for module in modules for e in importlib.import_module(module).evaluations(params)]
    evaluations = [e.for_model(model_slug) for e in found]
    ident = [e for e in evaluations if e.condition == {"set": in_distribution}]
    if not ident:
        raise VlstressError(
            f"in-distribution set {in_distribution!r} is not a zero-shot test set of the params"
        )
    loaded = {id(e): evaluation_logits(e) for e in evaluations}
    logits, labels, id_testset, model = loaded[id(ident[0])]
    labels = np.asarray(labels)
    fit, held_out = cal.held_out_split(len(labels), fit_fraction, seed)
    temperature = cal.fit_temperature(logits[fit], labels[fit])
    log.info(
        "%s: T = %.4g fitted on %d of %d %s images",
        model_slug,
        temperature,
        len(fit),
        len(labels),
        in_distribution,
    )
    bounded = at_bound(temperature)
    if bounded:
        log.warning(
            "%s: T = %.4g is on the search bound [0.01, 100]: the fit split has no interior NLL "
            "optimum (e.g. every fit image is misclassified); the scaled metrics use the bound",
            model_slug,
            temperature,
        )
    held_out_nll = (
        cal.nll(logits[held_out], labels[held_out]),
        cal.nll(logits[held_out] / temperature, labels[held_out]),
    )
    worse = worsens(*held_out_nll)
    if worse:
        log.warning(
            "%s: T = %.4g worsens the held-out %s NLL (%.4f at T = 1 -> %.4f): the fit does not "
            "carry over even within the set",
            model_slug,
            temperature,
            in_distribution,
            *held_out_nll,
        )
    flags = {"temperature_at_bound": int(bounded), "temperature_worsens_held_out_nll": int(worse)}

    inputs = {}
    for e in evaluations:
        for path in (Path(e.testset) / "manifest.json", Path(e.embeddings), Path(e.classifier)):
            inputs[str(path)] = sha256_file(path)
    block = provenance.build(
        "calibrate",
        {
            "params": [str(p) for p in params_files],
            "model": model_slug,
            "in_distribution": in_distribution,
            "fit_fraction": fit_fraction,
            "seed": seed,
            "bins": n_bins,
            "n_fit": len(fit),
            "temperature": temperature,
            "temperature_at_bound": bounded,
            "temperature_worsens_held_out_nll": worse,
        },
        seed=seed,
        model=model,
        inputs=inputs,
        packages=("scipy",),
    )
    records, outcomes, bins_out = [], [], []
    shifted_conf: dict[str, list[np.ndarray]] = {"raw": [], "scaled": []}
    shifted_correct = []
    panels = []
    for e in evaluations:
        set_logits, set_labels, testset, set_model = loaded[id(e)]
        set_labels = np.asarray(set_labels)
        condition = dict(e.condition)
        if e is ident[0]:
            set_logits, set_labels = set_logits[held_out], set_labels[held_out]
            condition["split"] = "held-out"
        if set_model != model:
            raise VlstressError(
                f"{e.embeddings} and {ident[0].embeddings} come from different models"
            )
        metrics = cal.calibration_metrics(set_logits, set_labels, temperature, n_bins)
        raw = cal.reliability_bins(set_logits, set_labels, n_bins)
        scaled = cal.reliability_bins(set_logits / temperature, set_labels, n_bins)
        records.append(
            assemble(
                "calibration",
                dataset={
                    "name": testset.dataset,
                    "kind": testset.kind,
                    "n_images": int(len(set_labels)),
                    "n_classes": len(testset.classes),
                },
                condition=condition,
                metrics={**metrics, "n_fit": len(fit), **flags},
                provenance=block,
            )
        )
        outcomes.append(image_outcomes(set_logits, set_labels, temperature, n_bins))
        bins_out.append(
            {
                "condition": condition,
                "dataset": testset.dataset,
                "raw": raw.to_dict(),
                "scaled": scaled.to_dict(),
            }
        )
        if e is ident[0]:
            panels.append(
                (
                    f"{in_distribution} (held-out ID, {len(set_labels)} images)",
                    raw,
                    scaled,
                    metrics["ece"],
                    metrics["ece_ts"],
                )
            )
        else:
            probs_raw, probs_scaled = cal.softmax(set_logits), cal.softmax(set_logits / temperature)
            shifted_conf["raw"].append(probs_raw.max(axis=1))
            shifted_conf["scaled"].append(probs_scaled.max(axis=1))
            shifted_correct.append(probs_raw.argmax(axis=1) == set_labels)
    if shifted_correct:
        correct = np.concatenate(shifted_correct)
        raw = cal.bins_of(np.concatenate(shifted_conf["raw"]), correct, n_bins)
        scaled = cal.bins_of(np.concatenate(shifted_conf["scaled"]), correct, n_bins)
        n_sets = len(shifted_correct)
        panels.append(
            (
                f"{n_sets} shifted set(s) pooled ({len(correct)} images)",
                raw,
                scaled,
                100 * raw.ece,
                100 * scaled.ece,
            )
        )
    bins = {
        "kind": "reliability-bins",
        "temperature": temperature,
        "fit_rows": fit.tolist(),
        "held_out_rows": held_out.tolist(),
        "sets": bins_out,
    }
    return Calibration(
        records,
        outcomes,
        bins,
        panels,
        temperature,
        model,
        block,
        at_bound=bounded,
        held_out_nll=held_out_nll,
    )


def log_records(calibration: Calibration, model_slug: str, log: logging.Logger) -> None:
    """One line per record: the ECE before -> after temperature scaling."""
    for record in calibration.records:
        m = record.metrics
        log.info(
            "%s %s: ECE %.2f%% -> %.2f%% (T = %.3g)",
            model_slug,
            record.condition,
            m["ece"],
            m["ece_ts"],
            calibration.temperature,
        )
