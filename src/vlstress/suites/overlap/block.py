"""The typed `overlap` params block (the schema and checks: `params.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class TrainCollection:
    kind: str  # folder | shards | embeddings
    path: str  # the folder, the shard list (a text file of .tar paths), or the .npy file
    max_images: int | None  # the first N (sorted), None = all


@dataclass(frozen=True)
class OverlapParams:
    KEY: ClassVar[str] = "overlap"
    train: TrainCollection
    testsets: tuple[str, ...]  # keys of zeroshot.testsets
    detector: str  # the model whose image embeddings find the neighbours (a key of models)
    index: str  # auto | flat | ivf
    nlist: int  # IVF lists
    nprobe: int  # IVF lists searched
    threshold: float | None  # None = calibrated on the planted duplicates
    planted: int  # training images copied per transform to calibrate the threshold
    recall: float  # the planted duplicates' recall the threshold keeps
    seed: int
