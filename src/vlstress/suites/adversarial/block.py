"""The typed `adversarial` params block (the schema and checks: `params.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal


@dataclass(frozen=True)
class AttackEntry:
    name: str
    kind: str  # vlstress.suites.adversarial.attacks.KINDS
    norm: Literal["linf", "l2"]
    eps: tuple[float, ...]  # budgets in 1/255 units of the norm
    steps: int | None
    alpha: float | None
    restarts: int
    extra: str | None  # more torchattacks arguments, key=value,...


@dataclass(frozen=True)
class AdversarialParams:
    KEY: ClassVar[str] = "adversarial"
    testset: str
    n_images: int | None
    seed: int
    attacks: tuple[AttackEntry, ...]
