"""Pricing: one `attack` job per attack and model: a clean pass, then per eps and restart its
steps, each a forward and backward pass of `Rates.gradient_pass` clean passes; query attacks
count forward passes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vlstress.cost.pricing import Pricing, Work, count, extra
from vlstress.errors import VlstressError
from vlstress.suites.adversarial.attacks import KINDS

SPSA_SAMPLES = 128  # torchattacks SPSA nb_sample as vlstress sets it
AUTOATTACK_STEPS = 10  # torchattacks APGD, APGD-T and FAB steps; Square 5,000 queries
AUTOATTACK_QUERIES = 5000
GRADIENT_KINDS = ("fgsm", "bim", "pgd", "mifgsm", "difgsm")


def attack_passes(attack: Mapping[str, Any], classes: int, gradient: float) -> tuple[float, bool]:
    """Clean passes per image of one attack at all its eps (the clean pass not included), and
    whether that is an upper bound (the attack stops early on images it fooled)."""
    kind = str(attack.get("kind"))
    if kind not in KINDS:
        raise VlstressError(
            f"attack {attack.get('name')!r}: unknown kind {kind!r} (known: {', '.join(KINDS)})"
        )
    # the steps the attack runs: given, else its kind's default, else one (as attacks.py does)
    steps = attack.get("steps") or KINDS[kind].default_steps or 1
    restarts = (attack.get("restarts") or 1) if KINDS[kind].random_start else 1
    runs = (1 if kind == "deepfool" else max(count(attack.get("eps")), 1)) * restarts
    if kind in GRADIENT_KINDS:
        return runs * steps * gradient, False
    if kind == "deepfool":  # a forward, then a backward per class (the Jacobian), each step
        return runs * steps * (1 + classes * (gradient - 1)), True
    if kind == "spsa":  # forward passes at +/- perturbations of nb_sample directions
        samples = int(extra(attack.get("extra")).get("nb_sample", SPSA_SAMPLES))
        return runs * steps * 2 * samples, False
    if kind in ("square", "nes"):  # one forward per query; both stop on images they fooled
        return runs * steps, True
    if kind == "autoattack":  # standard: APGD-CE, APGD-T, FAB-T on every other class; Square
        gradient_steps = AUTOATTACK_STEPS * (1 + 2 * (classes - 1))
        return runs * (gradient_steps * gradient + AUTOATTACK_QUERIES), True
    raise VlstressError(f"attack {attack.get('name')!r}: kind {kind!r} has no price here")


def price(pricing: Pricing) -> None:
    block = pricing.block("adversarial")
    clean = pricing.testset("adversarial")
    asked = block.get("n_images")
    n = clean.images if asked is None else min(int(asked), clean.images)
    attacks = list(block.get("attacks") or [])
    passes, bound, names = 0.0, False, []
    weights: dict[str, float] = {}
    for attack in attacks:
        per_image, upper = attack_passes(attack, clean.classes, pricing.rates.gradient_pass)
        passes += n * (1 + per_image)  # its clean pass, then the attack
        weights[str(attack.get("name"))] = 1 + per_image
        bound = bound or upper
        names.append(f"{attack.get('name')}: {1 + per_image:,.1f}")
    pricing.plan.work.append(
        Work(
            "adversarial",
            f"{n:,} images of {clean.name}; passes per image: {', '.join(names)}",
            passes=passes,
            jobs=len(attacks),
            upper_bound=bound,
            stage="attack",
            weights=weights,
        )
    )
