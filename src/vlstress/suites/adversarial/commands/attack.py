"""`vlstress attack`: one adversarial attack on a model's zero-shot classifier, at every eps of its
list.

The attacked function is pixels in [0, 1] (after the model's resize and centre crop) ->
normalisation -> image tower -> zero-shot logits (vlstress.zeroshot.adversarial). Images are
a seeded sample of the test set (--n-images). Writes one record per eps (task `adversarial`,
condition {attack, eps}) into one file, and per-image results in its sidecar.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from vlstress.argtypes import optional_float, optional_int, optional_str, seed_int
from vlstress.embedding.flags import (
    add_model_arguments,
    batch_size,
    model_params,
    model_spec,
)

log = logging.getLogger(__name__)


def eps_list(value: str) -> list[float]:
    """`1,2,4` -> [1.0, 2.0, 4.0] (1/255 units; DVC cannot interpolate YAML lists)."""
    try:
        items = [float(part) for part in str(value).split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated numbers (1/255 units), got {value!r}"
        ) from None
    if not items or any(item < 0 for item in items):
        raise argparse.ArgumentTypeError(f"eps must be numbers >= 0, got {value!r}")
    return items


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--testset",
        required=True,
        type=Path,
        help="test-set folder (or manifest) of `vlstress testset`",
    )
    parser.add_argument(
        "--classifier",
        required=True,
        type=Path,
        help="zero-shot classifier of the same model for that test set",
    )
    add_model_arguments(parser)
    attack = parser.add_argument_group("attack (an entry of adversarial.attacks)")
    attack.add_argument(
        "--attack", required=True, help="the attack's name (part of each record's condition)"
    )
    attack.add_argument(
        "--kind",
        required=True,
        help="attack kind: fgsm, bim, pgd, mifgsm, difgsm, deepfool, spsa, square, autoattack",
    )
    attack.add_argument("--norm", default="linf", choices=("linf", "l2"), help="threat model norm")
    attack.add_argument(
        "--eps",
        required=True,
        type=eps_list,
        help="budgets in 1/255 units of the norm, comma-separated",
    )
    attack.add_argument(
        "--steps",
        type=optional_int,
        default=None,
        help="iterations (square: queries; None = the kind's default)",
    )
    attack.add_argument(
        "--alpha",
        type=optional_float,
        default=None,
        help="step size in 1/255 units (None = 2.5 * eps / steps)",
    )
    attack.add_argument(
        "--restarts",
        type=optional_int,
        default=1,
        help="random restarts (pgd, spsa; square: its own restarts)",
    )
    attack.add_argument(
        "--extra",
        type=optional_str,
        default=None,
        help="more torchattacks arguments: key=value,key=value",
    )
    parser.add_argument(
        "--n-images",
        type=optional_int,
        default=None,
        help="attack a seeded sample of N images (None = all)",
    )
    parser.add_argument(
        "--attack-seed",
        type=seed_int,
        default=0,
        help="seed of the sample and of the attack's randomness",
    )
    parser.add_argument(
        "--out",
        required=True,
        type=Path,
        help="records file to write (per-image sidecar: <out>.json)",
    )


def run(args: argparse.Namespace) -> None:
    import numpy as np
    import torch
    from tqdm.auto import tqdm

    from vlstress import provenance
    from vlstress.embedding import models
    from vlstress.embedding.encoders import load_rgb
    from vlstress.errors import VlstressError
    from vlstress.io import sha256_file, sidecar, write_json
    from vlstress.record import assemble, write_records
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
    module = adversarial.pixel_zero_shot(model, weights, mean, std, scale, device, args.precision)
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
        {**model_params(args, spec), **attack_params},
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
                    "description": kind.description,
                },
            },
        )
        for result in results
    ]
    write_records(args.out, records)
    write_json(
        sidecar(args.out),
        {
            "kind": "adversarial-per-image",
            "images": [str(path) for path in paths],
            "labels": labels.tolist(),
            "clean_correct": clean.tolist(),
            "eps": {
                f"{r.eps:g}": {
                    "correct": r.correct.tolist(),
                    "linf": r.linf.round(4).tolist(),
                    "l2": r.l2.round(4).tolist(),
                }
                for r in results
            },
        },
    )
    for record in records:
        m = record.metrics
        log.info(
            "%s %s eps %g/255: top-1 %.1f%% -> %.1f%%",
            spec.slug,
            args.attack,
            record.condition["eps"],
            m["top1_clean"],
            m["robust_top1"],
        )
