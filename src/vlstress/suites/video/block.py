"""The typed `video` params block (the schema and checks: `params.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class VideoParams:
    KEY: ClassVar[str] = "video"
    testsets: tuple[str, ...]  # keys of zeroshot.testsets of a video kind
    k: int  # the largest frame distance scored (pm-0 .. pm-k)
