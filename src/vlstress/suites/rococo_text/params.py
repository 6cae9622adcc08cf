"""The params blocks of the text stress-tests (`ei`, `text_variants`): schema and checks."""

from __future__ import annotations

from typing import Any

import yaml

from vlstress.params_check import unknown

SCHEMA = yaml.safe_load(
    r"""
ei:
  type: object
  description: "embedding influence of caption words (docs/text-metrics.md)"
  required: [scorer, block_size]
  additionalProperties: false
  properties:
    scorer:
      type: object
      required: [slug, arch, pretrained]
      additionalProperties: false
      properties:
        slug: {type: string, pattern: "^[A-Za-z0-9][A-Za-z0-9_.-]*$"}
        arch: {type: string, minLength: 1, description: "open_clip architecture of the scorer"}
        pretrained: {type: [string, "null"],
                     description: "hub tag, local checkpoint path, or null for seeded random init"}
    block_size: {type: integer, minimum: 1}
text_variants:
  type: object
  description: "text stress-test caption sets (docs/text-variants.md)"
  required: [source, official_dir, strategy, strategy_seed, pool, nltk_data, sets]
  additionalProperties: false
  properties:
    source: {enum: [generated, official]}
    official_dir: {type: [string, "null"],
                   description: "folder of the official <set>.json; null = data/raw/<name>/rococo"}
    strategy: {enum: [lowest-ei, highest-ei, random, first]}
    strategy_seed: {type: integer, minimum: 0}
    pool: {enum: [caption-first, caption, vocabulary, union]}
    nltk_data: {type: string, minLength: 1}
    sets:
      type: object
      minProperties: 1
      propertyNames: {pattern: "^[a-z0-9][a-z0-9_]*$"}
      additionalProperties:
        type: object
        required: [kind, seed, words]
        additionalProperties: false
        properties:
          kind: {type: string,
                 description: "a caption-set kind: vlstress.suites.rococo_text.variants.KINDS
                               (checked)"}
          seed: {type: integer, minimum: 0}
          words: {type: [string, "null"], pattern: "^[a-z]+(,[a-z]+)*$",
                  description: "comma-separated word list (danger)"}
"""
)


def problems(params: dict[str, Any], on: frozenset[str]) -> list[str]:
    """Caption-set kinds must be registry entries; word-list kinds need their words."""
    from vlstress.suites.rococo_text.variants import KINDS

    found = []
    for name, entry in ((params.get("text_variants") or {}).get("sets") or {}).items():
        if entry["kind"] not in KINDS:
            found.append(
                f"text_variants.sets.{name}.kind: "
                + unknown("caption-set kind", entry["kind"], KINDS)
            )
        elif KINDS[entry["kind"]].needs_words and not entry.get("words"):
            found.append(
                f"text_variants.sets.{name}: kind {entry['kind']} needs a word list (words: "
                '"a,b,c")'
            )
    return found
