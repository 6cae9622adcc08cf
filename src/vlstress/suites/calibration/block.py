"""The typed `calibration` params block (the schema and checks: `params.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class CalibrationParams:
    KEY: ClassVar[str] = "calibration"
    in_distribution: str
    fit_fraction: float
    seed: int
    bins: int
