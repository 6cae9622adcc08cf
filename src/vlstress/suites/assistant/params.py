"""The params block of the assistant suite (`assistant`): schema and checks."""

from __future__ import annotations

from typing import Any

import yaml

from vlstress.params_check import classifier_problems, unknown
from vlstress.suites.assistant.names import IMAGENET_D_FORMS

SCHEMA = yaml.safe_load(
    r"""
assistant:
  type: object
  description: "multiple-choice questions to LLaVA-style assistants among the true class and a
    classifier's top confusions, beside every classifier's choice among the same options
    (docs/assistant.md)"
  required: [testsets, options_from, options, format, seed, question, max_new_tokens, batch_size]
  additionalProperties: false
  properties:
    testsets:
      type: array
      minItems: 1
      uniqueItems: true
      items: {type: string, pattern: "^[a-z0-9][a-z0-9_]*$",
              description: "a key of zeroshot.testsets"}
    options_from: {type: string, description: "a key of models (an open_clip or timm model): its
      highest-scoring wrong classes are the wrong options (the paper: the CLIP model, or a
      ResNet-50)"}
    options: {type: integer, minimum: 2, maximum: 26,
              description: "options per question, lettered A, B, ...: the true class and the
                options-1 top confusions"}
    format: {enum: [letters, imagenet-d, imagenet-d-strict], description: "letters: LLaVA's
      lettered multiple choice (the options in a seeded order, the answer a letter); imagenet-d:
      ImageNet-D's own question ('... Choose from the following list: a, b.', 2 options, the
      truth first), the answer scored exactly as ImageNet-D's compute_accuracy.py scores it (a
      substring test; an answer mentioning both or neither is left out of its accuracy);
      imagenet-d-strict: the same question, the answer the one class name it mentions, a name
      inside a longer one not counted twice"}
    seed: {type: integer, minimum: 0, description: "seed of the order of each question's options
      (letters)"}
    question: {type: string, minLength: 1, pattern: '^[^"\n]*$',
               description: "the question before the options (one line, no double quote)"}
    max_new_tokens: {type: integer, minimum: 1, maximum: 512,
                     description: "the longest answer generated (greedy)"}
    batch_size: {type: integer, minimum: 1, description: "questions per generate() call"}
"""
)


def problems(params: dict[str, Any], on: frozenset[str]) -> list[str]:
    """The test sets and the options' classifier (without an assistant in models, only the
    classifiers answer: their multiple-choice accuracy)."""
    if "assistant" not in on or "zeroshot" not in on or "assistant" not in params:
        return []
    found = []
    block, testsets, models = params["assistant"], params["zeroshot"]["testsets"], params["models"]
    for name in block["testsets"]:
        if name not in testsets:
            found.append("assistant.testsets: " + unknown("test set", name, testsets))
        elif testsets[name].get("corruption"):
            found.append(
                f"assistant.testsets: {name!r} is a corrupted copy; ask on a clean test set"
            )
    found += classifier_problems(models, block["options_from"], "assistant.options_from")
    if block["format"] in IMAGENET_D_FORMS and block["options"] != 2:
        found.append(
            f"assistant.options: ImageNet-D's question (format {block['format']}) offers 2 "
            f"options, the truth and the top confusion, not {block['options']}"
        )
    return found
