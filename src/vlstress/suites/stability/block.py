"""The typed `stability` params block (the schema and checks: `params.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class StabilityParams:
    KEY: ClassVar[str] = "stability"
    testset: str  # a key of zeroshot.testsets
    source: str  # generate | the folder of the released ImageNet-P videos
    n_images: int | None  # a seeded sample of the test set (null = all)
    perturbations: tuple[str, ...]  # vlstress.suites.stability.perturbations.PERTURBATIONS
    difficulty: int  # 1-3: noise strength, the stride of the other sequences
    size: int  # frame side (224 as ImageNet-P)
    seed: int
    baseline: str | None  # the model mFR / mT5D are relative to (a key of models)
    workers: int  # 0 = all cores
