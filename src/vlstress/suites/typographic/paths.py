"""The typographic copy of a test set, as a zero-shot evaluation (pure functions: the embedding job
and calibration read them)."""

from __future__ import annotations

from vlstress.params import Params
from vlstress.suites.typographic.block import TypographicParams
from vlstress.suites.zeroshot.paths import Evaluation, classifier
from vlstress.workflow.paths import ZEROSHOT_EMB, inside

SUITE = "typographic"
TYPOGRAPHIC = "data/typographic/{p.typographic.testset}"
TYPOGRAPHIC_EMB = "typographic.npy"  # inside the model's zero-shot folder


def evaluations(params: Params) -> list[Evaluation]:
    if SUITE not in params.on or "zeroshot" not in params.on:
        return []
    clean = params.block(TypographicParams).testset
    folder = TYPOGRAPHIC.replace("{p.typographic.testset}", clean)
    return [
        Evaluation(
            {"set": clean, "attack": "typographic"},
            folder,
            inside(ZEROSHOT_EMB, TYPOGRAPHIC_EMB),
            classifier(clean),
        )
    ]


def folders(params: Params) -> list[str]:
    return [e.testset for e in evaluations(params)]


def data_folders(params: Params) -> list[str]:
    return ["data/typographic"] if SUITE in params.on else []


def shaping_params(params: Params) -> list[str]:
    return ["typographic.testset"] if SUITE in params.on else []
