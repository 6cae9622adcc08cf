"""The work of `vlstress attack`: one adversarial attack on a model's zero-shot classifier, at every
eps of its list.

The attacked function is pixels in [0, 1] (after the model's resize and centre crop) ->
normalisation -> image tower -> zero-shot logits (vlstress.suites.adversarial.attacks). Images are
a seeded sample of the test set (--n-images). One record per eps (task `adversarial`, condition
{attack, eps}) and the per-image results (`Attacked.per_image`, the sidecar).
"""

from __future__ import annotations

import argparse
import logging
from dataclasses import dataclass
from typing import Any

import numpy as np

from vlstress.outcomes import Outcomes
from vlstress.record import Record, assemble


@dataclass(frozen=True)
class Attacked:
    """What `vlstress attack` writes: one record per eps, the per-image sidecar, and one block of
    per-image outcomes per record (`image_outcomes`)."""

    records: list[Record]
    per_image: dict[str, Any]
    slug: str  # the model's
    outcomes: list[Outcomes]


def attack(args: argparse.Namespace) -> Attacked:
    """Load the test set, classifier and model of the flags (vlstress.suites.adversarial.flags),
    attack the sample at every eps."""
    import torch
    from tqdm.auto import tqdm

    from vlstress import provenance
    from vlstress.embedding import models
    from vlstress.embedding.encoders import load_rgb
    from vlstress.embedding.flags import batch_size, model_params, model_spec
    from vlstress.errors import VlstressError
    from vlstress.io import sha256_file
    from vlstress.suites.adversarial import attacks as adversarial
    from vlstress.suites.zeroshot import classifier
    from vlstress.testsets import manifest as testsets

    spec_attack = adversarial.AttackSpec(
        name=args.attack,
        kind=args.kind,
        norm=args.norm,
        eps=tuple(args.eps),
        steps=args.steps,
        alpha=args.alpha,
        restarts=args.restarts or 1,
        extra=adversarial.parse_extra(args.extra),
    )
    adversarial.check_spec(spec_attack)  # before the model loads
    testset = testsets.load(args.testset)
    weights, clf_meta = classifier.load(args.classifier, testset.classes)
    scale = classifier.logit_scale(args.classifier, clf_meta)
    spec = model_spec(args)
    device = models.resolve_device(args.device)
    model, preprocess, _ = models.load(spec, device, threads=args.threads)
    described = models.describe(spec, model)
    if clf_meta["provenance"].get("model") != described:
        raise VlstressError(
            f"zero-shot classifier {args.classifier} was built by another model than "
            f"{spec.slug}; rebuild it"
        )
    rows = adversarial.subset(len(testset.images), args.n_images, args.attack_seed)
    paths = [testset.image_paths()[i] for i in rows]
    labels = np.array([testset.images[i]["label"] for i in rows], dtype=np.int64)
    to_pixels, mean, std = adversarial.pixel_pipeline(preprocess)
    pixels = torch.stack(
        [to_pixels(load_rgb(path)) for path in tqdm(paths, desc="images", unit="img")]
    )
    module = adversarial.pixel_zero_shot(
        model, weights, mean, std, scale, device, args.precision, clf_meta
    )
    clean, results = adversarial.run_attack(
        module,
        spec_attack,
        pixels,
        labels,
        n_classes=len(testset.classes),
        seed=args.attack_seed,
        batch_size=batch_size(args, device),
    )
    attack_params = {
        "attack": args.attack,
        "kind": args.kind,
        "norm": args.norm,
        "eps": args.eps,
        "steps": args.steps,
        "alpha": args.alpha,
        "restarts": args.restarts,
        "extra": spec_attack.extra,
        "n_images": args.n_images,
        "seed": args.attack_seed,
        "eps_unit": "1/255 of the norm, pixels in [0, 1] after resize and centre crop",
        "logit_scale": scale,
    }
    block = provenance.build(
        "attack",
        # the sample is decoded here by Pillow (load_rgb), whatever --decoder says
        {**model_params(args, spec, decoder="pil"), **attack_params},
        seed=spec.seed,
        model=described,
        device=device,
        inputs={
            str(p): sha256_file(p) for p in (testsets.manifest_path(args.testset), args.classifier)
        },
        packages=("torchattacks",),
    )
    kind = adversarial.KINDS[args.kind]
    dataset = {
        "name": testset.dataset,
        "kind": testset.kind,
        "n_images": len(rows),
        "n_classes": len(testset.classes),
    }
    records = [
        assemble(
            "adversarial",
            dataset=dataset,
            condition={"attack": args.attack, "eps": result.eps},
            metrics=adversarial.attack_metrics(clean, result),
            provenance={
                **block,
                "attack": {
                    "kind": args.kind,
                    "norm": args.norm,
                    "bounded": kind.bounded,
                    "black_box": kind.black_box,
                    "queries": "model evaluations per image, gradient passes included",
                    "description": kind.description,
                },
            },
        )
        for result in results
    ]
    per_image = {
        "kind": "adversarial-per-image",
        "images": [str(path) for path in paths],
        "labels": labels.tolist(),
        "clean_correct": clean.tolist(),
        "eps": {
            f"{r.eps:g}": {
                "correct": r.correct.tolist(),
                "linf": r.linf.round(4).tolist(),
                "l2": r.l2.round(4).tolist(),
                "queries": None if r.image_queries is None else r.image_queries.tolist(),
            }
            for r in results
        },
    }
    outcomes = [image_outcomes(clean, result.correct, labels) for result in results]
    return Attacked(records, per_image, spec.slug, outcomes)


def image_outcomes(clean: np.ndarray, robust: np.ndarray, labels: np.ndarray) -> Outcomes:
    """The per-image outcomes of one eps's record, in the sample's order: `correct` (after the
    attack: what robust top-1 counts), `clean_correct`, `fooled` (right before, wrong after: what
    attack success counts among the clean-correct images) and the true `label`."""
    clean = np.asarray(clean, dtype=bool)
    robust = np.asarray(robust, dtype=bool)
    return Outcomes(
        "image",
        {
            "correct": robust,
            "clean_correct": clean,
            "fooled": clean & ~robust,
            "label": np.asarray(labels, dtype=np.int64),
        },
    )


def log_records(attacked: Attacked, attack_name: str, log: logging.Logger) -> None:
    """One line per eps: clean -> robust top-1 (`log`: the command's logger)."""
    for record in attacked.records:
        m = record.metrics
        log.info(
            "%s %s eps %g/255: top-1 %.1f%% -> %.1f%%",
            attacked.slug,
            attack_name,
            record.condition["eps"],
            m["top1_clean"],
            m["robust_top1"],
        )
