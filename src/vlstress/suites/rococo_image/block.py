"""The typed `image_variants` params block (the schema and checks: `params.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal


@dataclass(frozen=True)
class ImageVariantsParams:
    KEY: ClassVar[str] = "image_variants"
    methods: tuple[str, ...]  # vlstress.suites.rococo_image.variants.PERTURBATIONS
    lams: tuple[float, ...]
    seeds: tuple[int, ...]
    mode: Literal["faithful", "clean"]
    size: int
    jpeg_quality: int
