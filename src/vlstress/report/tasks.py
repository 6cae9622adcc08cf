"""Task registry: how the report shows each `task` of a metric record, and its conditions.

The summary, figures and tables iterate over `TASKS` and over what the records
hold; nothing else knows the task names. A new task is one entry here; a record of
an unregistered task is still summarized (it sorts after the registered ones and
figures/tables that need display info leave it out). A new condition value (a new
perturbation such as "flip", a new text set) needs no entry at all: unknown values
are shown as they are and sort after the known ones.

Conditions: a record's `condition` without its replicate key (`vlstress.record.REPLICATE_KEY`,
"seed") is shown three ways:
- `condition_key`: canonical, stable text, e.g. `original`, `set=same_concept`,
  `perturbation=mix,lam=0.9` (text-valued keys first, then numbers, each by key name);
- `condition_label`: readable, e.g. `original`, `same-concept`, `mix λ=0.9`;
- `condition_sort_key`: the display order (known names in registry order, then numbers ascending).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from vlstress.record import base_condition
from vlstress.report.display import Task

ORIGINAL = "original"
# metric prefix -> retrieval direction
DIRECTIONS = {"i2t": "image → text", "t2i": "text → image"}
SHORT_DIRECTIONS = {"i2t": "I→T", "t2i": "T→I"}
# condition key -> symbol in labels (`lam` -> `λ=0.9`); other keys are shown by name
KEY_SYMBOLS = {"lam": "λ"}


def _registered() -> dict[str, Task]:
    from vlstress.suites import registry

    return {name: task for suite in registry.suites() for name, task in suite.tasks.items()}


TASKS: dict[str, Task] = _registered()


def task_info(task: str) -> Task | None:
    return TASKS.get(task)


def task_rank(task: str) -> tuple[int, str]:
    names = list(TASKS)
    return (names.index(task) if task in names else len(names), task)


def stressed_tasks() -> list[tuple[str, Task]]:
    """Registered tasks that stress a baseline, in registry order."""
    return [(name, task) for name, task in TASKS.items() if task.stressed]


def baseline_tasks() -> list[tuple[str, Task]]:
    return [(name, task) for name, task in TASKS.items() if not task.stressed and task.directions]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _items(condition: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """Text-like values first, then numbers, each by key name (replicate key left out)."""
    items = base_condition(condition).items()
    return sorted(items, key=lambda kv: (_is_number(kv[1]), kv[0]))


def _number(value: float | int) -> str:
    return str(value) if isinstance(value, int) else f"{value:.12g}"


def _text(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def condition_key(condition: Mapping[str, Any]) -> str:
    """Canonical text of a condition without its replicate: `original`,
    `perturbation=mix,lam=0.9`."""
    items = _items(condition)
    if not items:
        return ORIGINAL
    return ",".join(
        f"{key}={_number(value) if _is_number(value) else _text(value)}" for key, value in items
    )


def condition_json(condition: Mapping[str, Any]) -> str:
    """Compact, sorted JSON of a condition without its replicate (column `condition_json`)."""
    return json.dumps(
        base_condition(condition), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )


def condition_label(task: str, condition: Mapping[str, Any]) -> str:
    """Readable name: `original`, `same-concept`, `mix λ=0.9`; unknown values as they are."""
    items = _items(condition)
    if not items:
        return ORIGINAL
    info = TASKS.get(task)
    names = info.names if info else {}
    parts = []
    for key, value in items:
        if _is_number(value):
            parts.append(f"{KEY_SYMBOLS.get(key, key)}={value:g}")
        elif isinstance(value, str):
            parts.append(names.get(value, value))
        else:
            parts.append(f"{key}={_text(value)}")
    return " ".join(parts)


def condition_sort_key(task: str, condition: Mapping[str, Any]) -> list[tuple]:
    """Display order: `original` first, known names in registry order, unknown names after, numbers
    ascending."""
    info = TASKS.get(task)
    known = list(info.names) if info else []
    key = []
    for name, value in _items(condition):
        if _is_number(value):
            number = float(value)
            key.append((1, name, 0, -math.inf if math.isnan(number) else number, ""))
        else:
            text = _text(value)
            position = (
                known.index(value) if isinstance(value, str) and value in known else len(known)
            )
            key.append((0, name, position, 0.0, text))
    return key


def sweep_symbol(task: Task) -> str:
    return KEY_SYMBOLS.get(task.sweep or "", task.sweep or "")
