"""The params block of the calibration suite (`calibration`): schema and checks."""

from __future__ import annotations

from typing import Any

import yaml

from vlstress.params_check import unknown

SCHEMA = yaml.safe_load(
    r"""
calibration:
  type: object
  description: "calibration of the zero-shot softmax and temperature scaling (docs/holistic.md)"
  required: [in_distribution, fit_fraction, seed, bins]
  additionalProperties: false
  properties:
    in_distribution: {type: string,
                      description: "a key of zeroshot.testsets: the temperature is fitted on a split
                                    of it"}
    fit_fraction: {type: number, exclusiveMinimum: 0, exclusiveMaximum: 1}
    seed: {type: integer, minimum: 0}
    bins: {type: integer, minimum: 1,
           description: "equal-width confidence bins of the ECE (15 as usual)"}
"""
)


def problems(params: dict[str, Any], on: frozenset[str]) -> list[str]:
    if "calibration" not in on or "zeroshot" not in on or "calibration" not in params:
        return []
    testsets = params["zeroshot"]["testsets"]
    name = params["calibration"]["in_distribution"]
    return (
        []
        if name in testsets
        else ["calibration.in_distribution: " + unknown("test set", name, testsets)]
    )
