"""The params block of accuracy_vs_recall: schema and checks."""

from __future__ import annotations

from typing import Any

import yaml

from vlstress.params_check import unknown

SCHEMA = yaml.safe_load(
    r"""
accuracy_vs_recall:
  type: object
  description: "zero-shot top-1 against retrieval R@1 across models (docs/zeroshot.md)"
  required: [testset]
  additionalProperties: false
  properties:
    testset: {type: string, description: "a key of zeroshot.testsets: its top-1 is the x axis"}
"""
)


def problems(params: dict[str, Any], on: frozenset[str]) -> list[str]:
    if "accuracy_vs_recall" not in on or "zeroshot" not in on or "accuracy_vs_recall" not in params:
        return []
    testsets = params["zeroshot"]["testsets"]
    name = params["accuracy_vs_recall"]["testset"]
    return (
        []
        if name in testsets
        else ["accuracy_vs_recall.testset: " + unknown("test set", name, testsets)]
    )
