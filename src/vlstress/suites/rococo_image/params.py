"""The params block of the image stress-tests (`image_variants`): schema and checks."""

from __future__ import annotations

from typing import Any

import yaml

from vlstress.params_check import unknown

SCHEMA = yaml.safe_load(
    r"""
image_variants:
  type: object
  description: "image stress-tests (docs/image-variants.md)"
  required: [methods, lams, seeds, mode, size, jpeg_quality]
  additionalProperties: false
  properties:
    methods:
      type: array
      minItems: 1
      uniqueItems: true
      items: {type: string,
              description: "an image perturbation:
                            vlstress.suites.rococo_image.variants.PERTURBATIONS (checked)"}
    lams:
      type: array
      minItems: 1
      uniqueItems: true
      items: {type: number, minimum: 0, maximum: 1}
      description: "share of the original image kept"
    seeds:
      type: array
      minItems: 1
      uniqueItems: true
      items: {type: integer, minimum: 0}
      description: "variant seeds (partners, boxes)"
    mode: {enum: [faithful, clean]}
    size: {type: integer, minimum: 1, description: "faithful: square resize (official: 384)"}
    jpeg_quality: {type: integer, minimum: 1, maximum: 100,
                   description: "faithful: JPEG quality (official: 75)"}
"""
)


def problems(params: dict[str, Any], on: frozenset[str]) -> list[str]:
    """Perturbations must be registry entries, and faithful-only ones need the faithful mode."""
    from vlstress.suites.rococo_image.variants import PERTURBATIONS

    found = []
    for method in (params.get("image_variants") or {}).get("methods", []):
        if method not in PERTURBATIONS:
            found.append(
                "image_variants.methods: " + unknown("image perturbation", method, PERTURBATIONS)
            )
        elif (
            PERTURBATIONS[method].faithful_only and params["image_variants"].get("mode") == "clean"
        ):
            found.append(
                f"image_variants.methods: {method} needs image_variants.mode faithful (it "
                "corrupts [0, 1] images)"
            )
    return found
