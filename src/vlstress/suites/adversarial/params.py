"""The params block of the adversarial suite (`adversarial`): schema and checks."""

from __future__ import annotations

from typing import Any

import yaml

from vlstress import typed
from vlstress.params_check import unknown
from vlstress.suites.adversarial.block import AttackEntry

SCHEMA = yaml.safe_load(
    r"""
adversarial:
  type: object
  description: "adversarial attacks on the zero-shot classifier, in pixel space (docs/holistic.md)"
  required: [testset, n_images, seed, attacks]
  additionalProperties: false
  properties:
    testset: {type: string, description: "a key of zeroshot.testsets"}
    n_images: {type: [integer, "null"], minimum: 1,
               description: "attack a seeded sample of N images (null = all)"}
    seed: {type: integer, minimum: 0,
           description: "seed of the sample and of the attacks' randomness"}
    attacks:
      type: array
      minItems: 1
      items:
        type: object
        required: [name, kind, norm, eps, steps, alpha, restarts, extra]
        additionalProperties: false
        properties:
          name: {type: string, pattern: "^[a-z0-9][a-z0-9_]*$",
                 description: "names the records (condition attack)"}
          kind: {type: string, description: "vlstress.suites.adversarial.attacks.KINDS (checked)"}
          norm: {enum: [linf, l2]}
          eps:
            type: [string, number]
            pattern: "^[0-9]+(\\.[0-9]+)?(,[0-9]+(\\.[0-9]+)?)*$"
            minimum: 0
            description: "budgets in 1/255 units of the norm, comma-separated (e.g. \"1,2,4\")"
          steps: {type: [integer, "null"], minimum: 1,
                  description: "iterations (square, nes: the query budget per image); null = the
                    kind's default (nes: required)"}
          alpha: {type: [number, "null"], exclusiveMinimum: 0,
                  description: "step size in 1/255 units; null = 2.5 * eps / steps"}
          restarts: {type: integer, minimum: 1, description: "random restarts (pgd, spsa, square)"}
          extra: {type: [string, "null"],
                  description: "more torchattacks arguments, key=value,key=value"}
"""
)


def attack_spec(entry: AttackEntry):
    """An `adversarial.attacks` entry of params as the AttackSpec `vlstress attack` builds from its
    flags."""
    from vlstress.suites.adversarial.attacks import AttackSpec, parse_extra

    return AttackSpec(
        name=entry.name,
        kind=entry.kind,
        norm=entry.norm,
        eps=entry.eps,
        steps=entry.steps,
        alpha=entry.alpha,
        restarts=entry.restarts,
        extra=parse_extra(entry.extra),
    )


def problems(params: dict[str, Any], on: frozenset[str]) -> list[str]:
    """The attacked test set, attack names used once, and each attack's kind and options."""
    from vlstress.errors import VlstressError
    from vlstress.suites.adversarial import attacks

    if "adversarial" not in on or "zeroshot" not in on or "adversarial" not in params:
        return []
    found = []
    block, testsets = params["adversarial"], params["zeroshot"]["testsets"]
    if block["testset"] not in testsets:
        found.append("adversarial.testset: " + unknown("test set", block["testset"], testsets))
    names = [entry["name"] for entry in block["attacks"]]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        found.append(f"adversarial.attacks: attack name(s) used twice: {', '.join(repeated)}")
    for i, raw in enumerate(block["attacks"]):
        where = f"adversarial.attacks[{i}] ({raw['name']})"
        try:
            entry = typed.build(AttackEntry, raw, f"adversarial.attacks[{i}]")
        except VlstressError as exc:  # e.g. an eps that is no number: say so in words
            found.append(f"{where}: {exc}")
            continue
        negative = [eps for eps in entry.eps if eps < 0]
        if negative or not entry.eps:
            found.append(
                f"{where}.eps: budgets are numbers >= 0 in 1/255 units, comma-separated "
                f'(e.g. "1,4"); got {raw["eps"]!r}'
            )
            continue
        try:
            attacks.check_spec(attack_spec(entry))
        except VlstressError as exc:
            found.append(f"adversarial.attacks: {exc}")
    return found
