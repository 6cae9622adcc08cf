"""Where the overlap suite reads and writes (pure functions of the params)."""

from __future__ import annotations

from vlstress.params import Params
from vlstress.suites.overlap.block import OverlapParams
from vlstress.suites.zeroshot.paths import Evaluation, evaluation_reads, named_evaluations
from vlstress.workflow.paths import CLASSIFIERS, ZEROSHOT_EMB

SUITE = "overlap"
COLLECTION = "data/overlap"
DETECTED = "results/overlap/detect.json"
RECORD = "results/metrics/{model}/overlap.json"  # one record per test set


def evaluations(params: Params) -> list[Evaluation]:
    """The zero-shot evaluation of each test set of `overlap.testsets` (params order)."""
    if SUITE not in params.on or "zeroshot" not in params.on:
        return []
    return named_evaluations(params, params.block(OverlapParams).testsets)


def set_paths(params: Params) -> list[str]:
    return evaluation_reads(evaluations(params))


def set_folders(params: Params) -> list[str]:
    return ["data/testsets", ZEROSHOT_EMB, CLASSIFIERS] if SUITE in params.on else []


def set_params(params: Params) -> list[str]:
    return ["zeroshot.testsets", "overlap.testsets"] if SUITE in params.on else []


def testset_paths(params: Params) -> list[str]:
    """The test-set folders alone: what the detection reads besides the detector's embeddings."""
    return [e.testset for e in evaluations(params)]


def testset_folders(params: Params) -> list[str]:
    return ["data/testsets"] if SUITE in params.on else []
