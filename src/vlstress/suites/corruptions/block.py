"""The typed `corruptions` params block (the schema and checks: `params.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class CorruptionsParams:
    KEY: ClassVar[str] = "corruptions"
    testset: str
    source: str  # generate | the folder of the released ImageNet-C
    names: tuple[str, ...]  # vlstress.suites.corruptions.imagenet_c.CORRUPTIONS
    severities: tuple[int, ...]
    seed: int
    size: int  # 0 = original size
    workers: int  # 0 = all cores
