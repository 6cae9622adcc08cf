"""The 3D-corrupted test sets as embedding sets of a model's zero-shot image job (group
`zeroshot`)."""

from __future__ import annotations

from vlstress.embedding.sets import EmbeddingSet
from vlstress.params import Params
from vlstress.suites.corruptions_3d.paths import evaluations
from vlstress.suites.zeroshot.sets import image_sets


def zeroshot(config: Params) -> list[tuple[str, EmbeddingSet]]:
    return image_sets(evaluations(config))
