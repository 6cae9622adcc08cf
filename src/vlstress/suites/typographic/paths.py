"""The typographic copy of a test set, as a zero-shot evaluation (pure functions: the embedding job
and calibration read them)."""

from __future__ import annotations

from typing import Any

from vlstress.suites.zeroshot.paths import Evaluation, classifier
from vlstress.workflow.paths import ZEROSHOT_EMB, inside, suites_on

SUITE = "typographic"
TYPOGRAPHIC = "data/typographic/{p.typographic.testset}"
TYPOGRAPHIC_EMB = "typographic.npy"  # inside the model's zero-shot folder


def evaluations(params: dict[str, Any]) -> list[Evaluation]:
    if SUITE not in suites_on(params) or "zeroshot" not in suites_on(params):
        return []
    clean = params["typographic"]["testset"]
    folder = TYPOGRAPHIC.replace("{p.typographic.testset}", clean)
    return [
        Evaluation(
            {"set": clean, "attack": "typographic"},
            folder,
            inside(ZEROSHOT_EMB, TYPOGRAPHIC_EMB),
            classifier(clean),
        )
    ]


def folders(params: dict[str, Any]) -> list[str]:
    return [e.testset for e in evaluations(params)]


def data_folders(params: dict[str, Any]) -> list[str]:
    return ["data/typographic"] if SUITE in suites_on(params) else []


def shaping_params(params: dict[str, Any]) -> list[str]:
    return ["typographic.testset"] if SUITE in suites_on(params) else []
