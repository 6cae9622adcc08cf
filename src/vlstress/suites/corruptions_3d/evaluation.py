"""One 3D-corrupted condition scored as the zero-shot suite scores a corrupted set, recorded under
the task `corruption_3d` with what was corrupted and the depth used in its condition."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from vlstress.suites.corruptions_3d.paths import TASK
from vlstress.suites.zeroshot import evaluation
from vlstress.suites.zeroshot.paths import Evaluation


def evaluate(
    one: Evaluation, extra: dict[str, Any], clean_record: Path | None, ks: list[int]
) -> evaluation.Evaluation:
    """The evaluation of one (corruption, severity) of one model (paths without `{model}`);
    `extra`: condition entries added where not None (`images`, `depth`)."""
    evaluated = evaluation.evaluate(
        Path(one.testset),
        Path(one.embeddings),
        Path(one.classifier),
        task="corruption",  # the images of one severity, condition corruption and severity
        corruption=one.condition["corruption"],
        severity=int(one.condition["severity"]),
        clean_record=clean_record,
        ks=ks,
    )
    record = evaluated.record
    provenance = {**record.provenance, "params": {**record.provenance["params"], "task": TASK}}
    condition = {**record.condition, **{k: v for k, v in extra.items() if v is not None}}
    record = replace(record, task=TASK, condition=condition, provenance=provenance)
    return replace(evaluated, record=record)
