"""The params block of the typographic suite (`typographic`): schema and checks."""

from __future__ import annotations

from typing import Any

import yaml

from vlstress.params_check import unknown

SCHEMA = yaml.safe_load(
    r"""
typographic:
  type: object
  description: "typographic attacks: a wrong class name written on each image (docs/zeroshot.md)"
  required: [testset, seed, size]
  additionalProperties: false
  properties:
    testset: {type: string, description: "a key of zeroshot.testsets"}
    seed: {type: integer, minimum: 0}
    size: {type: integer, minimum: 0,
           description: "resize + centre crop before writing (0 = original size)"}
"""
)


def problems(params: dict[str, Any], on: frozenset[str]) -> list[str]:
    if "typographic" not in on or "zeroshot" not in on or "typographic" not in params:
        return []
    testsets = params["zeroshot"]["testsets"]
    name = params["typographic"]["testset"]
    return (
        [] if name in testsets else ["typographic.testset: " + unknown("test set", name, testsets)]
    )
