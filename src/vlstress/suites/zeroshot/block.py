"""The typed `zeroshot` params block (the schema and checks: `params.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from vlstress.params import Testset


@dataclass(frozen=True)
class Robustness:
    transform: Literal["logit", "probit", "linear"]
    fit: Literal["ols", "huber"]
    mce_baseline: str | None
    # the line of effective robustness: testbed (imagenet-testbed's ImageNet-trained models, where
    # a shift has a testbed column) | run (this run's models) | a CSV file in the testbed's layout
    baselines: str
    bootstrap: int  # resamples of the published baselines for the 95% band; 0 = none


@dataclass(frozen=True)
class Published:
    tolerance: float  # points, under the published protocol
    protocol_tolerance: float  # points, where the templates or class names differ


@dataclass(frozen=True)
class ZeroshotParams:
    KEY: ClassVar[str] = "zeroshot"
    testsets: dict[str, Testset]
    templates: str  # openai | simple | single | a template file
    in_distribution: str
    robustness: Robustness
    published: Published
    # "set=file,...": each test set's classes as ImageNet-1k classes (a json file, or `demo`), for
    # supervised ImageNet classifiers (timm models); sets of the ImageNet family need none
    imagenet_maps: str | None = None


def parse_imagenet_maps(value: str | None) -> dict[str, str]:
    """`set=file,set=file` (zeroshot.imagenet_maps) as a mapping; a malformed pair is an error."""
    from vlstress.errors import VlstressError

    found: dict[str, str] = {}
    for pair in filter(None, (part.strip() for part in (value or "").split(","))):
        name, sep, path = (text.strip() for text in pair.partition("="))
        if not sep or not name or not path or name in found:
            raise VlstressError(
                f"zeroshot.imagenet_maps: {pair!r} is not a `test set=map file` pair (each set "
                "once)"
            )
        found[name] = path
    return found
