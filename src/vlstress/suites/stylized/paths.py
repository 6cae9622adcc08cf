"""The stylized copy of a test set, as a zero-shot evaluation (pure functions: the embedding job
reads them)."""

from __future__ import annotations

from vlstress.params import Params
from vlstress.suites.stylized.block import StylizedParams
from vlstress.suites.zeroshot.paths import Evaluation, classifier
from vlstress.workflow.paths import ZEROSHOT_EMB, inside

SUITE = "stylized"
STYLIZED = "data/stylized/{p.stylized.testset}"
STYLIZED_EMB = "stylized.npy"  # inside the model's zero-shot folder


def evaluations(params: Params) -> list[Evaluation]:
    if SUITE not in params.on or "zeroshot" not in params.on:
        return []
    block = params.block(StylizedParams)
    return [
        Evaluation(
            {"set": block.testset, "shift": "stylized"},
            STYLIZED.replace("{p.stylized.testset}", block.testset),
            inside(ZEROSHOT_EMB, STYLIZED_EMB),
            classifier(block.testset),
        )
    ]


def folders(params: Params) -> list[str]:
    return [e.testset for e in evaluations(params)]


def data_folders(params: Params) -> list[str]:
    return ["data/stylized"] if SUITE in params.on else []


def shaping_params(params: Params) -> list[str]:
    return ["stylized.testset"] if SUITE in params.on else []
