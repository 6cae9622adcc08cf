"""The typed `corruptions_3d` params block (the schema and checks: `params.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class Corruptions3dParams:
    KEY: ClassVar[str] = "corruptions_3d"
    testset: str
    source: str  # generate | the folder of the released ImageNet-3DCC
    depth: str  # synthetic | a folder of 16-bit depth PNGs
    depth_encoding: str  # midas-inverse | taskonomy
    names: tuple[str, ...]  # vlstress.suites.corruptions_3d.names.CORRUPTIONS
    severities: tuple[int, ...]
    size: int  # 0 = original size
    seed: int  # the noises of iso_noise and low_light, per image
    workers: int  # 0 = all cores
