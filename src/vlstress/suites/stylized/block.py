"""The typed `stylized` params block (the schema and checks: `params.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class StylizedParams:
    KEY: ClassVar[str] = "stylized"
    testset: str  # a key of zeroshot.testsets
    styles: str  # demo | a folder of style images
    weights: str | None  # None: seeded random init; a URL folder or local folder of the .pth files
    pins: str  # the pin file: sha256 of each weight file, written at the first download
    alpha: float  # AdaIN's content-style trade-off, in [0, 1]
    seed: int
    size: int
