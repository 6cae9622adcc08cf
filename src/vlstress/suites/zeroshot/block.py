"""The typed `zeroshot` params block (the schema and checks: `params.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from vlstress.params import Testset


@dataclass(frozen=True)
class Robustness:
    transform: Literal["logit", "probit", "linear"]
    fit: Literal["ols", "huber"]
    mce_baseline: str | None


@dataclass(frozen=True)
class ZeroshotParams:
    KEY: ClassVar[str] = "zeroshot"
    testsets: dict[str, Testset]
    templates: str  # openai | simple | single | a template file
    in_distribution: str
    robustness: Robustness
