"""The zero-shot test sets and evaluations the params make, as pure functions (no stage declaration:
the embedding jobs and calibration read them). The classification suites that require this one
(corruptions, typographic) declare their evaluations with `Evaluation` too."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from vlstress.params import Params
from vlstress.suites.zeroshot.block import ZeroshotParams
from vlstress.workflow.paths import (
    CLASSIFIER,
    CLASSIFIERS,
    TESTSET,
    TESTSET_EMB,
    ZEROSHOT_EMB,
    ZEROSHOT_RECORD,
    inside,
)

SUITE = "zeroshot"


@dataclass(frozen=True)
class Evaluation:
    """One zero-shot evaluation the params produce for every model (paths keep `{model}`)."""

    # {"set": name} (+ "corruption"/"severity", or "attack": "typographic")
    condition: dict[str, Any]
    testset: str  # the test-set folder
    embeddings: str
    classifier: str

    def paths(self) -> list[str]:
        return [self.testset, self.embeddings, self.classifier]

    def for_model(self, model: str) -> Evaluation:
        return Evaluation(
            self.condition, *(path.replace("{model}", model) for path in self.paths())
        )


def classifier(testset: str) -> str:
    return inside(CLASSIFIERS, CLASSIFIER, testset=testset)


def testsets(params: Params) -> list[str]:
    """The test-set names (sorted); none when the suite is off."""
    return sorted(params.block(ZeroshotParams).testsets) if SUITE in params.on else []


def evaluations(params: Params) -> list[Evaluation]:
    """The clean evaluation of every test set (sorted)."""
    return [
        Evaluation(
            {"set": name},
            TESTSET.format(testset=name),
            inside(ZEROSHOT_EMB, TESTSET_EMB, testset=name),
            classifier(name),
        )
        for name in testsets(params)
    ]


def named_evaluations(params: Params, names: Sequence[str]) -> list[Evaluation]:
    """The clean evaluation of each test set of `names`, in that order (the suites that evaluate
    some of the zero-shot sets again: video, overlap)."""
    by_name = {e.condition["set"]: e for e in evaluations(params)}
    return [by_name[name] for name in names]


def evaluation_reads(found: Sequence[Evaluation]) -> list[str]:
    """What an evaluation of those sets reads: their folders and, when there is one, the model's
    zero-shot embeddings and classifiers (the folders, not the files in them: a file inside a
    folder output is no Snakemake input)."""
    return [e.testset for e in found] + [ZEROSHOT_EMB, CLASSIFIERS] * bool(found)


# ---- path lists: what the model jobs and calibration read
def testset_folders(params: Params) -> list[str]:
    return [TESTSET.format(testset=name) for name in testsets(params)]


def evaluation_paths(params: Params) -> list[str]:
    """Test-set folders and the model's two folders (a file inside a folder output is no Snakemake
    input)."""
    found = testset_folders(params)
    return found + [ZEROSHOT_EMB, CLASSIFIERS] * bool(found)


def evaluation_folders(params: Params) -> list[str]:
    return ["data/testsets", ZEROSHOT_EMB, CLASSIFIERS] if SUITE in params.on else []


def data_folders(params: Params) -> list[str]:
    return ["data/testsets"] if SUITE in params.on else []


def shaping_params(params: Params) -> list[str]:
    return ["suites", "zeroshot.testsets"] if SUITE in params.on else []


def testset_params(params: Params) -> list[str]:
    return ["zeroshot.testsets"] if SUITE in params.on else []


# ---- what the published check of a model reads: each test set's record and folder
def record_evaluations(params: Params) -> list[tuple[str, str]]:
    """(zero-shot record, test-set folder) of every test set (`{model}` kept in the record)."""
    return [
        (ZEROSHOT_RECORD.replace("{testset}", name), TESTSET.format(testset=name))
        for name in testsets(params)
    ]


def record_paths(params: Params) -> list[str]:
    """The records and the test-set folders (Snakemake inputs)."""
    found = record_evaluations(params)
    return [record for record, _ in found] + [folder for _, folder in found]


def record_deps(params: Params) -> list[str]:
    """The records (files: their folder holds the check's own output) and the test sets' folder
    (DVC dependencies)."""
    found = record_evaluations(params)
    return [record for record, _ in found] + data_folders(params)
