"""The typed `finetune` params block (the schema and checks: `params.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from vlstress.params import Dataset, NamedModel


@dataclass(frozen=True)
class Variant:
    w_sc: float
    w_vc: float


@dataclass(frozen=True)
class FinetuneParams:
    KEY: ClassVar[str] = "finetune"
    base: NamedModel
    train: Dataset
    text_kind: str
    words: tuple[str, ...] | None
    method: str
    lam: float
    form: Literal["hard-negative", "hinge"]
    margin: float
    steps: int
    batch_size: int
    lr: float
    weight_decay: float
    warmup: int
    accumulate: int
    freeze: Literal["image", "text"] | None
    checkpoint_every: int
    seed: int
    nproc: int
    variants: dict[str, Variant]
