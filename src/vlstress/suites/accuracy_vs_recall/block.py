"""The typed `accuracy_vs_recall` params block (the schema and checks: `params.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class AccuracyVsRecallParams:
    KEY: ClassVar[str] = "accuracy_vs_recall"
    testset: str
