"""The params block of the 3D Common Corruptions suite (`corruptions_3d`): schema and checks."""

from __future__ import annotations

from typing import Any

import yaml

from vlstress.params_check import unknown

SCHEMA = yaml.safe_load(
    r"""
corruptions_3d:
  type: object
  description: "3D Common Corruptions of a test set (docs/3d.md)"
  required: [testset, source, depth, depth_encoding, names, severities, size, seed, workers]
  additionalProperties: false
  properties:
    testset: {type: string, description: "a key of zeroshot.testsets"}
    source: {type: string,
             description: "generate (near_focus, far_focus, fog_3d from the images and their depth;
                           color_quant, low_light, iso_noise from the images)
                           | the folder of the released ImageNet-3DCC
                           (<corruption>/<severity>/<wnid>/<file>), read for the test set's images
                           (a test set of kind imagenet)"}
    depth: {type: string,
            description: "synthetic (a labelled ramp, far at the top: not measured) | a folder of
                          16-bit PNGs, one per test image at its relative path (suffix .png)"}
    depth_encoding: {enum: [midas-inverse, taskonomy],
                     description: "how the PNGs' values are depth: midas-inverse (ImageNet-3DCC's:
                                   1 / (value / 512), clamped to 0.5) | taskonomy (value / 8000)"}
    names:
      type: array
      minItems: 1
      uniqueItems: true
      items: {type: string,
              description: "a corruption: vlstress.suites.corruptions_3d.names.CORRUPTIONS
                            (checked)"}
    severities:
      type: array
      minItems: 1
      uniqueItems: true
      items: {type: integer, minimum: 1, maximum: 5}
    size: {type: integer, minimum: 0,
           description: "resize 256/224 x size + centre crop size before corrupting
                         (ImageNet-3DCC: 224); 0 = original size"}
    seed: {type: integer, minimum: 0,
           description: "iso_noise's and low_light's noise, hashed with each image's path"}
    workers: {type: integer, minimum: 0,
              description: "processes per generation step (0 = all cores of the node)"}
"""
)


def problems(params: dict[str, Any], on: frozenset[str]) -> list[str]:
    """The test set must be a zero-shot test set, the names registry entries; generating refuses a
    release-only corruption, reading the release a test set that is not ImageNet val."""
    from vlstress.suites.corruptions.imagenet_c import RELEASED_KINDS
    from vlstress.suites.corruptions_3d.names import CORRUPTIONS, GENERATED, generable

    if "corruptions_3d" not in on or "zeroshot" not in on or "corruptions_3d" not in params:
        return []
    found = []
    block, testsets = params["corruptions_3d"], params["zeroshot"]["testsets"]
    if block["testset"] not in testsets:
        found.append("corruptions_3d.testset: " + unknown("test set", block["testset"], testsets))
    entry = testsets.get(block["testset"]) or {}
    generating = block["source"] == "generate"
    if not generating and entry and entry.get("kind") not in RELEASED_KINDS:
        found.append(
            f"corruptions_3d.source: the released ImageNet-3DCC holds ImageNet val's images; test "
            f"set {block['testset']!r} is of kind {entry.get('kind')!r}, not imagenet"
        )
    for name in block["names"]:
        if name not in CORRUPTIONS:
            found.append("corruptions_3d.names: " + unknown("3D corruption", name, CORRUPTIONS))
        elif generating and not generable(name):
            found.append(
                f"corruptions_3d.names: {name} is read from the released ImageNet-3DCC only "
                f"(source: <its folder>); generated: {', '.join(GENERATED)}"
            )
    return found
