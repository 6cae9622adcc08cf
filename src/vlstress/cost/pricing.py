"""What a suite's pricing hook gets, and what it fills: the work per model and the shared work.

A suite prices its own work: its declaration names a module (`Suite.pricing`) whose
`price(pricing: Pricing) -> None` appends `Work` (what each model does), `Shared` (what is done
once) and notes to `pricing.plan`. The hooks run in the order they are given (the registry's:
a suite after those it requires), so a hook reads what an earlier one left on the context: the
zero-shot test sets, their class count and prompts per class.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

from vlstress.cost import sizes
from vlstress.cost.rates import Rates
from vlstress.errors import VlstressError


@dataclass(frozen=True)
class Work:
    """What one suite asks of each model."""

    suite: str
    what: str
    images: int = 0  # images embedded and stored
    passes: float = 0.0  # further image passes (attack steps), in clean forward passes
    texts: int = 0  # texts through the text tower
    text_rows: int = 0  # text embeddings stored
    jobs: int = 0  # GPU jobs it adds per model
    upper_bound: bool = False  # an attack that stops early on a fooled image
    # the stage whose jobs do it (its texts: `text_stage`, if another), and how it splits over
    # the values of that stage's first axis after the model (an attack, a set): relative weights
    # by value; empty: evenly. What each job asks the scheduler for (`vlstress.cost.jobs`)
    stage: str = ""
    text_stage: str | None = None
    weights: Mapping[str, float] = field(default_factory=dict)

    @property
    def image_passes(self) -> float:
        return self.images + self.passes


@dataclass(frozen=True)
class Shared:
    """Work done once for the whole grid: CPU core-seconds, and GPU jobs on `arch` (their
    measured seconds, or passes and texts priced at the architecture's rates)."""

    name: str
    what: str
    cpu_s: float = 0.0
    gpu_s: float = 0.0
    arch: str | None = None
    image_passes: float = 0.0
    texts: float = 0.0
    jobs: int = 0
    stage: str = ""  # as for `Work`: the stage whose jobs do it, and its split over their axis
    weights: Mapping[str, float] = field(default_factory=dict)

    def priced(self, images_s: float, captions_s: float, startup_s: float) -> Shared:
        seconds = self.image_passes / images_s + self.texts / captions_s + self.jobs * startup_s
        return replace(self, gpu_s=self.gpu_s + seconds, image_passes=0.0, texts=0.0, jobs=0)


@dataclass
class Plan:
    """The sizes the params name, the work per model and the shared work (shared GPU work not
    priced yet: `estimate` prices it on its architecture)."""

    dataset: sizes.DatasetSize
    sets: dict[str, sizes.SetSize] = field(default_factory=dict)
    work: list[Work] = field(default_factory=list)
    shared: list[Shared] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def block_of(values: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    block = values.get(key)
    if not isinstance(block, Mapping):
        raise VlstressError(f"params have no `{key}` block")
    return block


def count(value: Any) -> int:
    """Items of a comma-separated string or a list (eps budgets, caption sets, ...)."""
    if value is None:
        return 0
    if isinstance(value, (list, tuple)):
        return len(value)
    return len([v for v in str(value).split(",") if v.strip()])


def extra(value: Any) -> dict[str, str]:
    """`a=1,b=2` or a mapping -> {"a": "1", "b": "2"} (an attack's extra options)."""
    if isinstance(value, Mapping):
        return {str(k): str(v) for k, v in value.items()}
    pairs = [p.partition("=") for p in str(value or "").split(",") if "=" in p]
    return {k.strip(): v.strip() for k, _, v in pairs}


@dataclass
class Pricing:
    """The context of a pricing hook: the merged params, the suites that are on, the rates, the
    project whose data/ holds built sets, the sizes given on the command line, and the plan it
    fills. `testsets`, `classes` and `prompts` are set by the hook that prices the zero-shot
    test sets (None and 0 before it ran)."""

    values: Mapping[str, Any]
    on: frozenset[str]
    rates: Rates
    plan: Plan
    project: Path = Path(".")
    given: Mapping[str, int] = field(default_factory=dict)
    assistants: tuple[str, ...] = ()  # the models that generate answers (not priced)
    testsets: dict[str, sizes.SetSize] | None = None
    classes: int = 0  # classes of all the zero-shot test sets
    prompts: int = 0  # prompts per class (templates)

    def block(self, key: str) -> Mapping[str, Any]:
        return block_of(self.values, key)

    def sets_of(self, entries: Mapping[str, Any], folder: str) -> dict[str, sizes.SetSize]:
        """The sizes of the sets of a block (test sets, OOD sets), by name."""
        return {
            name: sizes.testset_size(name, entry, self.project, folder, self.given)
            for name, entry in sorted(entries.items())
        }

    def zeroshot_sets(self) -> dict[str, sizes.SetSize]:
        if self.testsets is None:
            raise VlstressError(
                "the zero-shot test sets are not priced yet: the suite that makes them is off "
                "or priced after the suite that reads them"
            )
        return self.testsets

    def testset(self, block: str) -> sizes.SetSize:
        """The zero-shot test set a block names (`<block>.testset`)."""
        name = str(self.block(block).get("testset"))
        testsets = self.zeroshot_sets()
        if name not in testsets:
            raise VlstressError(f"{block}.testset {name!r} is not a zero-shot test set")
        return testsets[name]


class Hook(NamedTuple):
    """A suite's pricing hook: its name, the module with `price`, and whether it is on whatever
    `suites:` says."""

    suite: str
    module: str
    always: bool = False


def load(hook: Hook) -> Callable[[Pricing], None]:
    """The `price` function of a hook's module, or an error naming the suite."""
    try:
        module = importlib.import_module(hook.module)
    except ModuleNotFoundError as exc:
        parents = {hook.module.rsplit(".", i)[0] for i in range(hook.module.count(".") + 1)}
        if exc.name not in parents:  # the module is there; something it imports is not
            raise
        raise VlstressError(
            f"suite {hook.suite!r}: its pricing module {hook.module!r} is not found"
        ) from exc
    price = getattr(module, "price", None)
    if not callable(price):
        raise VlstressError(
            f"suite {hook.suite!r}: its pricing module {hook.module!r} has no price(pricing)"
        )
    return price


def run(hooks: Sequence[Hook], pricing: Pricing) -> None:
    """Call, in order, the hooks of the suites that are on (every hook's module is loaded, so a
    misnamed one is an error whatever `suites:` says)."""
    prices = [(hook, load(hook)) for hook in hooks]
    for hook, price in prices:
        if hook.always or hook.suite in pricing.on:
            price(pricing)
