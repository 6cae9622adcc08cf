"""The typed `finetune` params block (the schema and checks: `params.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from vlstress.params import Dataset, NamedModel, Testset


@dataclass(frozen=True)
class Lora:
    """LoRA adapters (peft) on the Linear layers of one tower named by `modules`, for the variants
    with a LoRA rank: only the adapters train, merged into the weights the variant writes."""

    alpha: int
    dropout: float
    tower: Literal["image", "text"]
    modules: tuple[str, ...]


@dataclass(frozen=True)
class Variant:
    w_sc: float
    w_vc: float
    lora: int  # LoRA rank; 0 = every weight trains


@dataclass(frozen=True)
class LabelledVariant:
    loss: Literal["flyp", "standard"]
    lora: int  # LoRA rank; 0 = every weight trains


@dataclass(frozen=True)
class Labelled:
    """Fine-tuning on the labelled images of `train`: FLYP (the CLIP loss on prompts of their
    classes) or standard (cross-entropy through a head initialised from the zero-shot classifier
    of the `templates`)."""

    train: Testset
    templates: str
    variants: dict[str, LabelledVariant]


@dataclass(frozen=True)
class Wise:
    """WiSE-FT: (1 - alpha) * base + alpha * the variant `of`, one model per alpha."""

    of: str
    alphas: tuple[float, ...]


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
    labelled: Labelled
    lora: Lora
    wise: Wise
