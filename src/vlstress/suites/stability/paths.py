"""The perturbation sequences the params make, as zero-shot evaluations (pure functions: the
embedding job and the evaluation read them)."""

from __future__ import annotations

from vlstress.params import Params
from vlstress.suites.stability.block import StabilityParams
from vlstress.suites.zeroshot.paths import Evaluation, classifier
from vlstress.workflow.paths import ZEROSHOT_EMB, inside

SUITE = "stability"
SEQUENCES = "data/stability/{perturbation}"
SEQUENCES_EMB = "stability/{perturbation}.npy"  # inside the model's zero-shot folder
RECORD = "results/metrics/{model}/stability.json"  # one record per perturbation


def evaluations(params: Params) -> list[Evaluation]:
    """Each perturbation's frames of `stability.testset` (params order); none when off."""
    if SUITE not in params.on or "zeroshot" not in params.on:
        return []
    block = params.block(StabilityParams)
    return [
        Evaluation(
            {"set": block.testset, "perturbation": name, "difficulty": block.difficulty},
            SEQUENCES.format(perturbation=name),
            inside(ZEROSHOT_EMB, SEQUENCES_EMB, perturbation=name),
            classifier(block.testset),
        )
        for name in block.perturbations
    ]


def folders(params: Params) -> list[str]:
    return [e.testset for e in evaluations(params)]


def data_folders(params: Params) -> list[str]:
    return ["data/stability"] if SUITE in params.on else []


def shaping_params(params: Params) -> list[str]:
    return ["stability.testset", "stability.perturbations"] if SUITE in params.on else []
