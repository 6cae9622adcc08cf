"""`vlstress wise-ft`: WiSE-FT, the weights (1 - alpha) * base + alpha * a fine-tuned variant.

Loads the base model (its model card: hub weights, a checkpoint, or the seeded random init) and a
variant's checkpoint of `vlstress finetune`, mixes them (vlstress.suites.finetune.wise; alpha 0
and 1 give the end points bit for bit) and writes a safetensors checkpoint that a model entry
evaluates like any other, with its sidecar (`<out>.json`: alpha, base, variant, provenance).
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from vlstress.argtypes import non_negative_float
from vlstress.embedding.flags import add_model_arguments

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_model_arguments(parser)
    parser.add_argument(
        "--finetuned",
        required=True,
        type=Path,
        help="the variant's weights (`vlstress finetune --out`)",
    )
    parser.add_argument(
        "--alpha",
        required=True,
        type=non_negative_float,
        help="share of the fine-tuned weights, in [0, 1]",
    )
    parser.add_argument(
        "--out",
        required=True,
        type=Path,
        help="the mixed weights (.safetensors; sidecar <out>.json)",
    )


def run(args: argparse.Namespace) -> None:
    from safetensors.torch import load_file, save_file

    from vlstress import provenance
    from vlstress.embedding import models
    from vlstress.embedding.flags import model_spec
    from vlstress.errors import VlstressError
    from vlstress.io import atomic_path, read_json, sha256_file, sidecar, write_json
    from vlstress.suites.finetune.wise import check_alpha, interpolate

    check_alpha(args.alpha)
    if not args.finetuned.is_file():
        raise VlstressError(f"--finetuned {args.finetuned}: no such checkpoint")
    spec = model_spec(args)
    model, _, _ = models.load(spec, "cpu", threads=args.threads)
    base = {name: tensor.detach().contiguous() for name, tensor in model.state_dict().items()}
    try:
        finetuned = load_file(str(args.finetuned))
    except Exception as exc:
        raise VlstressError(f"--finetuned {args.finetuned}: unreadable checkpoint ({exc})") from exc
    try:
        mixed = interpolate(base, finetuned, args.alpha)
    except VlstressError as exc:
        raise VlstressError(f"base {spec.slug} and {args.finetuned}: {exc}") from None
    with atomic_path(args.out) as tmp:
        save_file(mixed, str(tmp))
    described = models.describe(spec, model)
    variant_card = sidecar(args.finetuned)
    variant = read_json(variant_card).get("variant") if variant_card.is_file() else None
    write_json(
        sidecar(args.out),
        {
            "kind": "wise-ft-checkpoint",
            "alpha": args.alpha,
            "base": described,
            "variant": variant,
            "arch": spec.arch,
            "provenance": provenance.build(
                "wise-ft",
                {"alpha": args.alpha, "variant": variant},
                seed=spec.seed,
                model=described,
                device="cpu",
                inputs={str(args.finetuned): sha256_file(args.finetuned)},
            ),
        },
    )
    log.info("WiSE-FT alpha %g of %s and %s -> %s", args.alpha, spec.slug, variant, args.out)
