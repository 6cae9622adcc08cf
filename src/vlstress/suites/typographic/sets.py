"""The typographic copy of a test set as an embedding set of a model's zero-shot image job."""

from __future__ import annotations

from vlstress.embedding.sets import EmbeddingSet
from vlstress.params import Params
from vlstress.suites.typographic.paths import evaluations
from vlstress.suites.zeroshot.sets import image_sets


def zeroshot(config: Params) -> list[tuple[str, EmbeddingSet]]:
    return image_sets(evaluations(config))
