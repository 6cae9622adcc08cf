"""The stimuli as embedding sets of a model's two zero-shot jobs: their images (group `zeroshot`)
and the classifier of the 16 categories (group `classifiers`, the zero-shot templates)."""

from __future__ import annotations

from pathlib import Path

from vlstress.embedding.sets import EmbeddingSet, testset_images
from vlstress.params import Params
from vlstress.suites.shape_bias.block import ShapeBiasParams
from vlstress.suites.shape_bias.paths import STIMULI, STIMULI_CLASSIFIER, STIMULI_EMB, folders
from vlstress.suites.shape_bias.stimuli import IMAGENET16
from vlstress.suites.zeroshot.block import ZeroshotParams
from vlstress.suites.zeroshot.sets import classifier


def zeroshot(config: Params) -> list[tuple[str, EmbeddingSet]]:
    return [
        (STIMULI_EMB, testset_images(Path(folder), STIMULI_EMB.removesuffix(".npy")))
        for folder in folders(config)
    ]


def classifiers(config: Params) -> list[tuple[str, EmbeddingSet]]:
    """The classifier the decisions come from: the 16 category names, or the 1000 ImageNet classes
    (`decision: imagenet16`) whose probabilities `vlstress shape-bias` averages per category. A
    timm model's categories are their ImageNet classes (model-vs-human's map, averaged
    probabilities)."""
    if not folders(config):
        return []
    templates = config.block(ZeroshotParams).templates
    classes = None
    if config.block(ShapeBiasParams).decision == "imagenet16":
        from vlstress.testsets.labelmaps import imagenet_classnames

        classes = list(imagenet_classnames())
    imagenet16 = str(IMAGENET16)
    return [(STIMULI_CLASSIFIER, classifier(Path(STIMULI), templates, classes, imagenet16))]
