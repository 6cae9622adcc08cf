"""Where the video suite reads and writes (pure functions of the params)."""

from __future__ import annotations

from vlstress.params import Params
from vlstress.suites.video.block import VideoParams
from vlstress.suites.zeroshot.paths import Evaluation, evaluation_reads, named_evaluations
from vlstress.workflow.paths import CLASSIFIERS, ZEROSHOT_EMB

SUITE = "video"
RECORD = "results/metrics/{model}/video.json"  # one record per video test set


def evaluations(params: Params) -> list[Evaluation]:
    """The zero-shot evaluation of each test set of `video.testsets` (params order)."""
    if SUITE not in params.on or "zeroshot" not in params.on:
        return []
    return named_evaluations(params, params.block(VideoParams).testsets)


# ---- the path list its evaluation reads: the video test sets, the model's embeddings and
# classifiers; for DVC, their folders and the params that shape them
def set_paths(params: Params) -> list[str]:
    return evaluation_reads(evaluations(params))


def set_folders(params: Params) -> list[str]:
    return ["data/testsets", ZEROSHOT_EMB, CLASSIFIERS] if SUITE in params.on else []


def set_params(params: Params) -> list[str]:
    return ["zeroshot.testsets", "video.testsets"] if SUITE in params.on else []
