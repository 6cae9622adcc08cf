"""The params block of the stylized suite (`stylized`): schema and checks."""

from __future__ import annotations

from typing import Any

import yaml

from vlstress.params_check import unknown

SCHEMA = yaml.safe_load(
    r"""
stylized:
  type: object
  description: "an AdaIN-stylized copy of a test set, as Stylized-ImageNet (docs/stylized.md)"
  required: [testset, styles, weights, pins, alpha, seed, size]
  additionalProperties: false
  properties:
    testset: {type: string, description: "a key of zeroshot.testsets"}
    styles: {type: string, description: "demo (scikit-image textures) | a folder of style images"}
    weights: {type: [string, "null"],
              description: "null = seeded random init (offline); a URL folder or local folder of
                            pytorch-AdaIN's vgg_normalised.pth and decoder.pth"}
    pins: {type: string,
           description: "the pin file: each weight file's sha256, written at the first download,
                         checked from then on (commit it)"}
    alpha: {type: number, minimum: 0, maximum: 1,
            description: "AdaIN's content-style trade-off (Stylized-ImageNet: 1.0)"}
    seed: {type: integer, minimum: 0, description: "style choice per image and random-init seed"}
    size: {type: integer, minimum: 32, description: "side of the stylized images"}
"""
)


def problems(params: dict[str, Any], on: frozenset[str]) -> list[str]:
    """The stylized test set must be a zero-shot test set (the style folder is checked by the step:
    the params check reads no dataset folder)."""
    if "stylized" not in on or "zeroshot" not in on or "stylized" not in params:
        return []
    found = []
    block, testsets = params["stylized"], params["zeroshot"]["testsets"]
    if block["testset"] not in testsets:
        found.append("stylized.testset: " + unknown("test set", block["testset"], testsets))
    return found
