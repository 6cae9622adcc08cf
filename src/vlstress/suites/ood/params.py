"""The params block of the OOD suite (`ood`): schema and checks."""

from __future__ import annotations

from typing import Any

import yaml

from vlstress import typed
from vlstress.params_check import unknown
from vlstress.suites.ood.block import OodParams

SCHEMA = yaml.safe_load(
    r"""
ood:
  type: object
  description: "out-of-distribution detection with the zero-shot classifier (docs/holistic.md)"
  required: [in_distribution, sets, scores, temperature]
  additionalProperties: false
  properties:
    in_distribution: {type: string, description: "a key of zeroshot.testsets"}
    sets:
      type: object
      minProperties: 1
      propertyNames: {pattern: "^[a-z0-9][a-z0-9_]*$"}
      additionalProperties: {$ref: "#/$defs/testset"}
    scores: {type: string, pattern: "^[a-z_]+(,[a-z_]+)*$",
             description: "comma-separated: mcm, msp, max_logit, energy"}
    temperature: {type: number, exclusiveMinimum: 0,
                  description: "T of MCM and of the energy score (1 as in the MCM paper)"}
"""
)


def problems(params: dict[str, Any], on: frozenset[str]) -> list[str]:
    """The in-distribution set, the OOD sets' kinds and names, and the scores."""
    from vlstress.suites.ood.scores import SCORES
    from vlstress.testsets.entry_check import entry_problems

    if "ood" not in on or "zeroshot" not in on or "ood" not in params:
        return []
    found = []
    block, testsets = params["ood"], params["zeroshot"]["testsets"]
    if block["in_distribution"] not in testsets:
        found.append(
            "ood.in_distribution: " + unknown("test set", block["in_distribution"], testsets)
        )
    for name, entry in block["sets"].items():
        found += entry_problems(entry, f"ood.sets.{name}")
        if name in testsets:
            found.append(
                f"ood.sets.{name}: also a zero-shot test set name; give the OOD set its own name"
            )
    if not found:
        found += _shared_class_problems(block["sets"], block["in_distribution"], testsets)
    for score in typed.build(OodParams, block, "ood").scores:
        if score not in SCORES:
            found.append("ood.scores: " + unknown("OOD score", score, SCORES))
    return found


def _shared_class_problems(sets: dict[str, Any], ident: str, testsets: dict[str, Any]) -> list[str]:
    """An OOD set sharing a class with the in-distribution set, where both sets' classes are known
    without building them (vlstress.testsets.known_classes; otherwise `ood_testset` refuses it)."""
    from vlstress.errors import VlstressError
    from vlstress.testsets.known_classes import known_set
    from vlstress.testsets.manifest import shared_classes

    try:
        inside = known_set(testsets[ident], ident)
    except VlstressError as error:
        return [f"zeroshot.testsets.{ident}: {error}"]
    if inside is None:
        return []
    found = []
    for name, entry in sets.items():
        try:
            outside = known_set(entry, name)
        except VlstressError as error:
            found.append(f"ood.sets.{name}: {error}")
            continue
        shared = shared_classes(outside, inside) if outside is not None else []
        if shared:
            found.append(
                f"ood.sets.{name}: shares {len(shared)} class(es) with the in-distribution set "
                f"{ident!r}: {', '.join(shared)}; leave them out (drop)"
            )
    return found
