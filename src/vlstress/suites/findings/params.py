"""The params block of findings: schema and checks."""

from __future__ import annotations

from typing import Any

import yaml

from vlstress.params_check import unknown
from vlstress.suites.findings.pairing import ALL, BASE, Pairing

# what the fingerprints may group models by: the model attributes of the records, the kind of
# weights, and `size` (the image tower's parameters, in thirds of the run's pool)
GROUPINGS = (
    "family",
    "tower",
    "pretrain_data",
    "loss",
    "finetune_method",
    "finetune_base",
    "resolution",
    "weights_kind",
    "size",
)

SCHEMA = yaml.safe_load(
    r"""
findings:
  type: object
  description: >-
    headline metrics with intervals, fingerprints by model attributes, a robustness card per
    model (docs/findings.md)
  required: [attributes, min_group, compare]
  additionalProperties: false
  properties:
    attributes:
      type: string
      minLength: 1
      description: >-
        comma-separated model attributes the fingerprints group by (findings.params.GROUPINGS)
    min_group:
      type: integer
      minimum: 2
      description: "a group of fewer models is shown as too small"
    compare:
      type: string
      pattern: "^\\S+$"
      description: >-
        which models the paired comparisons pair: all (every pair; grows with the square of the
        pool), base (each fine-tuned variant with its base) or comma-separated reference model
        slugs, no spaces (every model with each)
"""
)


def problems(params: dict[str, Any], on: frozenset[str]) -> list[str]:
    if "findings" not in on or "findings" not in params:
        return []
    names = [name.strip() for name in str(params["findings"]["attributes"]).split(",")]
    compare = str(params["findings"].get("compare", ALL)).strip()
    models = params.get("models") or {}
    references = Pairing(compare).references
    bad_compare = [
        "findings.compare: " + unknown("model", name, tuple(models))
        for name in references
        if name not in models
    ]
    if compare not in (ALL, BASE) and not references:
        bad_compare.append(
            f"findings.compare {compare!r}: expected all, base or comma-separated model slugs"
        )
    return bad_compare + [
        "findings.attributes: " + unknown("model attribute", name, GROUPINGS)
        for name in names
        if name not in GROUPINGS
    ]
