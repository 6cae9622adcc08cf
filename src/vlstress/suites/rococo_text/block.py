"""The typed `ei` and `text_variants` params blocks (the schema and checks: `params.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from vlstress.params import NamedModel


@dataclass(frozen=True)
class EiParams:
    KEY: ClassVar[str] = "ei"
    scorer: NamedModel
    block_size: int


@dataclass(frozen=True)
class CaptionSet:
    kind: str  # vlstress.suites.rococo_text.variants.KINDS
    seed: int
    words: tuple[str, ...] | None  # the danger kind's word list


@dataclass(frozen=True)
class TextVariantsParams:
    KEY: ClassVar[str] = "text_variants"
    source: Literal["generated", "official"]
    official_dir: str | None
    strategy: Literal["lowest-ei", "highest-ei", "random", "first"]
    strategy_seed: int
    pool: Literal["caption-first", "caption", "vocabulary", "union"]
    nltk_data: str
    sets: dict[str, CaptionSet]
