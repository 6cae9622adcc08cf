"""The params block of the stability suite (`stability`): schema and checks."""

from __future__ import annotations

from typing import Any

import yaml

from vlstress.params_check import classifier_problems, unknown

SCHEMA = yaml.safe_load(
    r"""
stability:
  type: object
  description: "ImageNet-P style perturbation sequences: flip probability and top-5 distance
                (docs/stability.md)"
  required: [testset, source, n_images, perturbations, difficulty, size, seed, baseline, workers]
  additionalProperties: false
  properties:
    testset: {type: string, description: "a key of zeroshot.testsets"}
    source: {type: string,
             description: "generate (make the frames) | the folder of the released ImageNet-P
                           videos (<perturbation>/<wnid>/<image>.mp4), read for the test set's
                           images"}
    n_images: {type: [integer, "null"], minimum: 1,
               description: "a seeded sample of N images (null = all); each makes one sequence
                             of 31 frames (translate 41) per perturbation"}
    perturbations:
      type: array
      minItems: 1
      uniqueItems: true
      items: {type: string,
              description: "vlstress.suites.stability.perturbations.PERTURBATIONS (checked)"}
    difficulty: {type: integer, minimum: 1, maximum: 3,
                 description: "ImageNet-P difficulty: noise strength; stride of the others"}
    size: {type: integer, minimum: 32, description: "frame side (ImageNet-P: 224)"}
    seed: {type: integer, minimum: 0, description: "seed of the sample and of the noise draws"}
    baseline: {type: [string, "null"],
               description: "the model mFR and mT5D are relative to (a key of models; the
                             paper's is AlexNet); null = raw FP and T5D only"}
    workers: {type: integer, minimum: 0,
              description: "processes per generation step (0 = all cores of the node)"}
"""
)


def problems(params: dict[str, Any], on: frozenset[str]) -> list[str]:
    """The test set, the perturbations and the baseline must exist."""
    from vlstress.suites.stability.perturbations import PERTURBATIONS

    if "stability" not in on or "zeroshot" not in on or "stability" not in params:
        return []
    found = []
    block, testsets = params["stability"], params["zeroshot"]["testsets"]
    if block["testset"] not in testsets:
        found.append("stability.testset: " + unknown("test set", block["testset"], testsets))
    for name in block["perturbations"]:
        if name not in PERTURBATIONS:
            found.append("stability.perturbations: " + unknown("perturbation", name, PERTURBATIONS))
    models = params.get("models") or {}
    if block["baseline"] is not None:
        found += classifier_problems(models, block["baseline"], "stability.baseline")
    return found
