"""The typed `assistant` params block (the schema and checks: `params.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class AssistantParams:
    KEY: ClassVar[str] = "assistant"
    testsets: tuple[str, ...]  # keys of zeroshot.testsets the questions are asked on
    options_from: str  # the classifier (a model of an embedding kind) whose confusions are options
    options: int  # options per question: the true class and the options-1 top confusions
    format: str  # letters | imagenet-d | imagenet-d-strict: how a question is put and read
    seed: int  # the order of the options (per image)
    question: str  # put before the options
    max_new_tokens: int  # of the greedy answer
    batch_size: int  # questions per generate() call
