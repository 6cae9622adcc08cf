"""The typed `findings` params block (the schema and checks: `params.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class FindingsParams:
    KEY: ClassVar[str] = "findings"
    attributes: tuple[str, ...]
    min_group: int
    compare: str
