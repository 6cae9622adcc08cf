"""The flags of `vlstress attack`: test set and classifier, the model (vlstress.embedding.flags),
one attack entry of adversarial.attacks, the image sample and the output."""

from __future__ import annotations

import argparse
from pathlib import Path

from vlstress.argtypes import optional_float, optional_int, optional_str, seed_int
from vlstress.embedding.flags import add_model_arguments


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


def add_attack_arguments(parser: argparse.ArgumentParser) -> None:
    """Every flag of `vlstress attack`."""
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
        help="iterations (square, nes: the query budget per image; None = the kind's default)",
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
