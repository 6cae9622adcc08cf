"""The per-item outcomes behind the run's records, by case (model, set, task, condition): what the
bootstrap intervals and the paired comparisons resample. Each outcomes file lies beside its record
file (vlstress.outcomes), block i for record i."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from vlstress.errors import VlstressError
from vlstress.outcomes import Outcomes, outcomes_path, read_outcomes
from vlstress.record import Record
from vlstress.report import tasks

Case = tuple[str, str, str, str]  # CASE_COLUMNS: model, dataset, task, condition


def case_of(record: Record) -> Case:
    return (
        record.model["slug"],
        record.dataset["name"],
        record.task,
        tasks.condition_key(record.condition),
    )


def case_outcomes(
    found: Iterable[tuple[Path, Record]], outcome_files: Iterable[Path]
) -> dict[Case, list[Outcomes]]:
    """Case -> the outcomes of its records (one block per replicate seed), for the records whose
    file has a declared outcomes file; a file whose blocks do not match its records is named."""
    declared = {Path(p) for p in outcome_files}
    by_file: dict[Path, list[Record]] = {}
    for path, record in found:
        by_file.setdefault(Path(path), []).append(record)
    out: dict[Case, list[Outcomes]] = {}
    for path, records in by_file.items():
        items = outcomes_path(path)
        if items not in declared:
            continue
        blocks = read_outcomes(items)
        if len(blocks) != len(records):
            raise VlstressError(
                f"outcomes {items}: {len(blocks)} block(s) for the {len(records)} record(s) of "
                f"{path}; re-run the step that writes them"
            )
        for record, block in zip(records, blocks):
            out.setdefault(case_of(record), []).append(block)
    return out
