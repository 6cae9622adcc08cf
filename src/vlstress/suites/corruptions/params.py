"""The params block of the corruptions suite (`corruptions`): schema and checks."""

from __future__ import annotations

from typing import Any

import yaml

from vlstress.params_check import unknown

SCHEMA = yaml.safe_load(
    r"""
corruptions:
  type: object
  description: "ImageNet-C style corruptions of a test set (docs/zeroshot.md)"
  required: [testset, source, names, severities, seed, size, workers]
  additionalProperties: false
  properties:
    testset: {type: string, description: "a key of zeroshot.testsets"}
    source: {type: string,
             description: "generate (corrupt the images) | the folder of the released ImageNet-C
                           (<corruption>/<severity>/<wnid>/<file>.JPEG), read for the test set's
                           images (a test set of kind imagenet)"}
    names:
      type: array
      minItems: 1
      uniqueItems: true
      items: {type: string,
              description: "a corruption: vlstress.suites.corruptions.imagenet_c.CORRUPTIONS
                            (checked)"}
    severities:
      type: array
      minItems: 1
      uniqueItems: true
      items: {type: integer, minimum: 1, maximum: 5}
    seed: {type: integer, minimum: 0}
    size: {type: integer, minimum: 0,
           description: "resize 256/224 x size + centre crop size before corrupting (ImageNet-C:
                         224); 0 = original size"}
    workers: {type: integer, minimum: 0,
              description: "processes per generation step (0 = all cores of the node)"}
"""
)


def problems(params: dict[str, Any], on: frozenset[str]) -> list[str]:
    """The corrupted test set must be a zero-shot test set, the corruptions registry entries."""
    from vlstress.suites.corruptions.imagenet_c import CORRUPTIONS, RELEASED_KINDS

    if "corruptions" not in on or "zeroshot" not in on or "corruptions" not in params:
        return []
    found = []
    block, testsets = params["corruptions"], params["zeroshot"]["testsets"]
    if block["testset"] not in testsets:
        found.append("corruptions.testset: " + unknown("test set", block["testset"], testsets))
    entry = testsets.get(block["testset"]) or {}
    if block["source"] != "generate" and entry and entry.get("kind") not in RELEASED_KINDS:
        found.append(
            f"corruptions.source: the released ImageNet-C holds ImageNet val's images; test set "
            f"{block['testset']!r} is of kind {entry.get('kind')!r}, not imagenet"
        )
    for name in block["names"]:
        if name not in CORRUPTIONS:
            found.append("corruptions.names: " + unknown("corruption", name, CORRUPTIONS))
    return found
