"""`vlstress calibrate`: calibration of one model's zero-shot softmax on every set of the run.

The sets are the zero-shot evaluations the params produce (every test set, each corruption
at each severity, the typographic attack: `evaluations(params)` of each --evaluations-from module),
read from their embeddings and classifiers, so nothing is encoded again. A temperature is
fitted on a seeded split of the in-distribution set and applied unchanged to the held-out
rest and to every other set. One record per set (task `calibration`): top-1, confidence,
ECE (torchmetrics, --bins equal-width bins), NLL and Brier, raw and scaled (`_ts`); the
reliability bins go to the sidecar and the reliability diagrams to --out-fig.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from vlstress.argtypes import fraction, positive_int, seed_int, suite_modules

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--params",
        action="append",
        required=True,
        type=Path,
        help="params file(s): which sets the run evaluates",
    )
    parser.add_argument("--model", required=True, help="model slug (key of `models`)")
    parser.add_argument(
        "--evaluations-from",
        required=True,
        type=suite_modules,
        help="modules whose evaluations(params) list the sets",
    )
    parser.add_argument(
        "--in-distribution",
        required=True,
        help="test set whose held-out split fits the temperature",
    )
    parser.add_argument(
        "--fit-fraction",
        type=fraction,
        default=0.5,
        help="share of the in-distribution images the temperature is fitted on",
    )
    parser.add_argument("--seed", type=seed_int, default=0, help="seed of the fit / held-out split")
    parser.add_argument(
        "--bins", type=positive_int, default=15, help="equal-width confidence bins of the ECE"
    )
    parser.add_argument(
        "--out", required=True, type=Path, help="records file (reliability bins in <out>.json)"
    )
    parser.add_argument(
        "--out-fig", required=True, type=Path, help="reliability diagrams (PNG, PDF beside it)"
    )


def _logits(evaluation):
    """(logits, labels, testset, model block, classifier path) of one evaluation."""
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
        scale * (embeddings[rows].astype("float64") @ weights.T.astype("float64")),
        labels,
        testset,
        model,
    )


def run(args: argparse.Namespace) -> None:
    import importlib

    import numpy as np

    from vlstress import params as params_module
    from vlstress import provenance
    from vlstress.errors import VlstressError
    from vlstress.io import sha256_file, sidecar, write_json
    from vlstress.record import assemble, record_model, weights_short, write_records
    from vlstress.report import figures
    from vlstress.suites.calibration import calibration as cal
    from vlstress.suites.calibration.reliability import reliability_figure

    params = params_module.load(args.params)
    found = [
        e
        for module in args.evaluations_from
        for e in importlib.import_module(module).evaluations(params)
    ]
    evaluations = [e.for_model(args.model) for e in found]
    ident = [e for e in evaluations if e.condition == {"set": args.in_distribution}]
    if not ident:
        raise VlstressError(
            f"in-distribution set {args.in_distribution!r} is not a zero-shot test set of the "
            "params"
        )
    loaded = {id(e): _logits(e) for e in evaluations}
    logits, labels, id_testset, model = loaded[id(ident[0])]
    labels = np.asarray(labels)
    fit, held_out = cal.held_out_split(len(labels), args.fit_fraction, args.seed)
    temperature = cal.fit_temperature(logits[fit], labels[fit])
    log.info(
        "%s: T = %.4g fitted on %d of %d %s images",
        args.model,
        temperature,
        len(fit),
        len(labels),
        args.in_distribution,
    )
    bounded = cal.at_bound(temperature)
    if bounded:
        log.warning(
            "%s: T = %.4g is on the search bound [0.01, 100]: the fit split has no interior NLL "
            "optimum (e.g. every fit image is misclassified); the scaled metrics use the bound",
            args.model,
            temperature,
        )

    inputs = {}
    for e in evaluations:
        for path in (Path(e.testset) / "manifest.json", Path(e.embeddings), Path(e.classifier)):
            inputs[str(path)] = sha256_file(path)
    block = provenance.build(
        "calibrate",
        {
            "params": [str(p) for p in args.params],
            "model": args.model,
            "in_distribution": args.in_distribution,
            "fit_fraction": args.fit_fraction,
            "seed": args.seed,
            "bins": args.bins,
            "n_fit": len(fit),
            "temperature": temperature,
            "temperature_at_bound": bounded,
        },
        seed=args.seed,
        model=model,
        inputs=inputs,
        packages=("torchmetrics", "scipy"),
    )
    records, bins_out = [], []
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
        metrics = cal.calibration_metrics(set_logits, set_labels, temperature, args.bins)
        raw = cal.reliability_bins(set_logits, set_labels, args.bins)
        scaled = cal.reliability_bins(set_logits / temperature, set_labels, args.bins)
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
                metrics={**metrics, "n_fit": len(fit)},
                provenance=block,
            )
        )
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
                    f"{args.in_distribution} (held-out ID, {len(set_labels)} images)",
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
        raw = cal.bins_of(np.concatenate(shifted_conf["raw"]), correct, args.bins)
        scaled = cal.bins_of(np.concatenate(shifted_conf["scaled"]), correct, args.bins)
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
    write_records(args.out, records)
    write_json(
        sidecar(args.out),
        {
            "kind": "reliability-bins",
            "temperature": temperature,
            "fit_rows": fit.tolist(),
            "held_out_rows": held_out.tolist(),
            "sets": bins_out,
        },
    )
    figures.setup()
    label = f"{model['arch']} ({weights_short(model, record_model(model)['weights'])})"
    figures.save(reliability_figure(label, temperature, panels), args.out_fig, block)
    for record in records:
        m = record.metrics
        log.info(
            "%s %s: ECE %.2f%% -> %.2f%% (T = %.3g)",
            args.model,
            record.condition,
            m["ece"],
            m["ece_ts"],
            temperature,
        )
