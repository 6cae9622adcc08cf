"""The 3D-corrupted copies of a test set the params make, as zero-shot evaluations (pure functions:
the embedding job and the evaluation read them)."""

from __future__ import annotations

from vlstress.params import Params
from vlstress.suites.corruptions_3d.block import Corruptions3dParams
from vlstress.suites.corruptions_3d.names import CORRUPTIONS, RELEASED, RGB
from vlstress.suites.zeroshot.paths import Evaluation, classifier
from vlstress.workflow.paths import ZEROSHOT_EMB, inside

SUITE = "corruptions_3d"
TASK = "corruption_3d"  # the records' task: not ImageNet-C's `corruption` (no mCE mixes them)
SIZE = 224  # ImageNet-3DCC's side
CORRUPTED = "data/corruptions_3d/{corruption_3d}/s{severity_3d}"
# inside the model's zero-shot folder
CORRUPTED_EMB = "corrupted_3d/{corruption_3d}_s{severity_3d}.npy"
RECORD_NAME = "corruption3d-{corruption_3d}-s{severity_3d}.json"  # in the model's record folder
RECORD = "results/metrics/{model}/" + RECORD_NAME


def record_name(corruption: str, severity: object) -> str:
    return RECORD_NAME.format(corruption_3d=corruption, severity_3d=severity)


def evaluations(params: Params) -> list[Evaluation]:
    """Each corruption at each severity (params order) of `corruptions_3d.testset`; none when
    off."""
    if SUITE not in params.on or "zeroshot" not in params.on:
        return []
    block = params.block(Corruptions3dParams)
    return [
        Evaluation(
            {"set": block.testset, "corruption": corruption, "severity": severity},
            CORRUPTED.format(corruption_3d=corruption, severity_3d=severity),
            inside(ZEROSHOT_EMB, CORRUPTED_EMB, corruption_3d=corruption, severity_3d=severity),
            classifier(block.testset),
        )
        for corruption in block.names
        for severity in block.severities
    ]


def images(source: str, clean_kind: str | None, size: int = SIZE) -> str | None:
    """What a record says was corrupted (condition `images`): `imagenet-3dcc` for the released
    files, else the clean test set's kind (None when unknown) with the size the corruptions were
    made at when it is not 224 (`imagenet at 160 px`, `imagenet at original size`)."""
    if source != "generate":
        return RELEASED
    if clean_kind is None or size == SIZE:
        return clean_kind
    return f"{clean_kind} at {size} px" if size else f"{clean_kind} at original size"


def depth(block: Corruptions3dParams, corruption: str) -> str:
    """What a record says of the depth (condition `depth`)."""
    if block.source != "generate":
        return "as released (ImageNet-3DCC)"
    if CORRUPTIONS.get(corruption) == RGB:
        return "none (no depth needed)"
    from vlstress.suites.corruptions_3d.depth import label

    return label(block.depth, block.depth_encoding)


def folders(params: Params) -> list[str]:
    return [e.testset for e in evaluations(params)]


def data_folders(params: Params) -> list[str]:
    return ["data/corruptions_3d"] if SUITE in params.on else []


def shaping_params(params: Params) -> list[str]:
    return (
        ["corruptions_3d.testset", "corruptions_3d.names", "corruptions_3d.severities"]
        if SUITE in params.on
        else []
    )
