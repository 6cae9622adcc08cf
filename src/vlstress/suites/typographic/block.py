"""The typed `typographic` params block (the schema and checks: `params.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class TypographicParams:
    KEY: ClassVar[str] = "typographic"
    testset: str
    seed: int
    size: int  # 0 = original size
