"""The stylized copy as an embedding set of a model's zero-shot image job (group `zeroshot`)."""

from __future__ import annotations

from vlstress.embedding.sets import EmbeddingSet
from vlstress.params import Params
from vlstress.suites.stylized.paths import evaluations
from vlstress.suites.zeroshot.sets import image_sets


def zeroshot(config: Params) -> list[tuple[str, EmbeddingSet]]:
    return image_sets(evaluations(config))
