"""How the report shows a record task: the `Task` each suite declares for the tasks its records
carry."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Task:
    """Display info of one record task."""

    title: str  # "text stress (image → text)"
    directions: tuple[str, ...]  # metric prefixes the task reports ("i2t", "t2i")
    # the task whose records are the unstressed reference ("original") of this one
    baseline: str | None = None
    # condition value -> display name, in display order
    names: dict[str, str] = field(default_factory=dict)
    noun: str = ""  # what its conditions are, in a sentence: "text sets", "image variants"
    distractor: str = ""  # what a false top-1 is: "an altered caption"
    sweep: str | None = None  # numeric condition key a sweep figure draws on its x axis
    sweep_label: str = ""  # x-axis label of that sweep

    @property
    def stressed(self) -> bool:
        return self.baseline is not None
