"""How the report shows a record task: the `Task` each suite declares for the tasks its records
carry."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vlstress.outcomes import Outcomes, Resampling


@dataclass(frozen=True)
class Headline:
    """A metric a task leads with: the robustness card shows it with its interval, the fingerprints
    group models by it. Values are the records' (percent for proportions)."""

    metric: str  # "top1", "i2t_R@1", "ece"
    label: str  # "top-1 (%)"
    higher_is_better: bool = True
    # a share of items: a Wilson interval over n items, n being the summary column `n_column`, or
    # the record's count metric `n_metric`, or that count times the sum of the `n_share` metrics
    # (percent of it; shape bias: the shape and texture decisions among the cue-conflict images)
    proportion: bool = False
    n_column: str = "n_images"
    n_metric: str | None = None
    n_share: tuple[str, ...] = ()
    scale: float = 1.0  # what turns the record's value into the headline's unit (a fraction: 100)
    condition: str | None = None  # only this condition (canonical text), e.g. "category=all"
    # a share: the boolean per-item outcome it counts (`correct`), so two models on the same items
    # are compared pairwise (McNemar); None: no paired comparison
    item_column: str | None = None
    # only the items whose column equals the value count (a record of both retrieval directions
    # keeps every query: ("direction", "i2t") picks the image queries)
    item_where: tuple[str, str] | None = None
    # not a share: what a seeded BCa bootstrap of the record's per-item outcomes (vlstress.outcomes)
    # resamples to give its interval; None: no interval from the items
    resampling: Callable[[Outcomes], Resampling] | None = None


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
    headlines: tuple[Headline, ...] = ()  # what a robustness card shows of its records

    @property
    def stressed(self) -> bool:
        return self.baseline is not None
