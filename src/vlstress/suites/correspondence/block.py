"""The typed `correspondence` params block (the schema and checks: `params.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class CorrespondenceSet:
    """One correspondence set: its release (or synthetic scenes) and its protocol's settings."""

    kind: str  # vlstress.suites.correspondence.catalogue.KINDS
    root: str | None
    pairs: int | None
    seed: int
    image_size: str  # "480,640" or "512"
    mean: str
    std: str
    matches: int | None
    scale_factor: float | None
    thresholds: str  # "5px,10px,20px"
    binned: str | None
    bins: str | None
    max_angle: float | None
    split: str | None


@dataclass(frozen=True)
class CorrespondenceParams:
    KEY: ClassVar[str] = "correspondence"
    sets: dict[str, CorrespondenceSet]
