"""The OOD sets as embedding sets of a model's zero-shot image job (group `zeroshot`)."""

from __future__ import annotations

from pathlib import Path

from vlstress.embedding.sets import EmbeddingSet, testset_images
from vlstress.params import Params
from vlstress.suites.ood.paths import OOD_EMB, OOD_SET, names


def zeroshot(config: Params) -> list[tuple[str, EmbeddingSet]]:
    files = [OOD_EMB.format(oodset=name) for name in names(config)]
    return [
        (file, testset_images(Path(OOD_SET.format(oodset=name)), file.removesuffix(".npy")))
        for file, name in zip(files, names(config))
    ]
