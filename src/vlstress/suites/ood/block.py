"""The typed `ood` params block (the schema and checks: `params.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from vlstress.params import Testset


@dataclass(frozen=True)
class OodParams:
    KEY: ClassVar[str] = "ood"
    in_distribution: str  # a zero-shot test set
    sets: dict[str, Testset]
    scores: tuple[str, ...]  # mcm, msp, max_logit, energy
    temperature: float
