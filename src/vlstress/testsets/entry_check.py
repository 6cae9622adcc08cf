"""The params check of one test-set entry (`$defs/testset`: zero-shot test sets, OOD sets, the
labelled images of fine-tuning)."""

from __future__ import annotations

from typing import Any


def entry_problems(entry: dict[str, Any], where: str) -> list[str]:
    """The entry's kind is a known test-set kind and its class names are readable; `where` is the
    entry's params path (`zeroshot.testsets.objects`)."""
    from vlstress.params_check import unknown
    from vlstress.testsets.kinds import KINDS
    from vlstress.testsets.lists import class_name_problems

    found = []
    if entry["kind"] not in KINDS:
        found.append(f"{where}.kind: " + unknown("test-set kind", entry["kind"], KINDS))
    return found + class_name_problems(entry["classnames"], f"{where}.classnames")
