"""The corrupted copies of a test set the params make, as zero-shot evaluations (pure functions: the
embedding job and calibration read them)."""

from __future__ import annotations

from vlstress.params import Params
from vlstress.suites.corruptions.block import CorruptionsParams
from vlstress.suites.zeroshot.paths import Evaluation, classifier
from vlstress.testsets.imagenet_c import SIZE as IMAGENET_C_SIZE
from vlstress.workflow.paths import ZEROSHOT_EMB, inside

SUITE = "corruptions"
CORRUPTED = "data/corruptions/{corruption}/s{severity}"
CORRUPTED_EMB = "corrupted/{corruption}_s{severity}.npy"  # inside the model's zero-shot folder
RECORD_NAME = "corruption-{corruption}-s{severity}.json"  # in the model's record folder
RECORD = "results/metrics/{model}/" + RECORD_NAME


def record_name(corruption: str, severity: object) -> str:
    return RECORD_NAME.format(corruption=corruption, severity=severity)


def evaluations(params: Params) -> list[Evaluation]:
    """Each corruption at each severity (params order) of `corruptions.testset`; none when off."""
    if SUITE not in params.on or "zeroshot" not in params.on:
        return []
    block = params.block(CorruptionsParams)
    clean = block.testset
    return [
        Evaluation(
            {"set": clean, "corruption": corruption, "severity": severity},
            CORRUPTED.format(corruption=corruption, severity=severity),
            inside(ZEROSHOT_EMB, CORRUPTED_EMB, corruption=corruption, severity=severity),
            classifier(clean),
        )
        for corruption in block.names
        for severity in block.severities
    ]


RELEASED = "imagenet-c"  # a corruption record's `images` when the files are the released ones


def images(source: str, clean_kind: str | None, size: int = IMAGENET_C_SIZE) -> str | None:
    """What a corruption record says was corrupted (condition `images`): `imagenet-c` for the
    released ImageNet-C files, else the clean test set's kind (None when unknown), with the size
    the corruptions were made at when it is not ImageNet-C's (`imagenet at 160 px`, `imagenet at
    original size`): a blur or noise of another size is another corruption."""
    if source != "generate":
        return RELEASED
    if clean_kind is None or size == IMAGENET_C_SIZE:
        return clean_kind
    return f"{clean_kind} at {size} px" if size else f"{clean_kind} at original size"


def folders(params: Params) -> list[str]:
    return [e.testset for e in evaluations(params)]


def data_folders(params: Params) -> list[str]:
    return ["data/corruptions"] if SUITE in params.on else []


def shaping_params(params: Params) -> list[str]:
    return (
        ["corruptions.testset", "corruptions.names", "corruptions.severities"]
        if SUITE in params.on
        else []
    )
