"""Which pairs of models the paired comparisons compare (`findings.compare`). Pure Python: the
params check reads it as the comparisons do."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import combinations

ALL, BASE = "all", "base"


@dataclass(frozen=True)
class Pairing:
    """Which pairs of models a table compares (`findings.compare`): every pair (`all`: grows with
    the square of the pool), each fine-tuned variant with its base (`base`), or every model with
    each of the named reference models (a comma-separated list of slugs): the last two grow
    linearly with the pool."""

    spec: str = ALL
    bases: Mapping[str, str] = field(default_factory=dict)

    @property
    def references(self) -> tuple[str, ...]:
        if self.spec in (ALL, BASE):
            return ()
        return tuple(name.strip() for name in self.spec.split(",") if name.strip())

    def pairs(self, models: Iterable[str]) -> list[tuple[str, str]]:
        """(model a, model b) pairs among `models`; a reference or a base is always model b."""
        present = sorted(set(models))
        if self.spec == ALL:
            return list(combinations(present, 2))
        if self.spec == BASE:
            return [
                (model, self.bases[model])
                for model in present
                if self.bases.get(model) in present and self.bases[model] != model
            ]
        found: list[tuple[str, str]] = []
        for reference in self.references:
            if reference not in present:
                continue
            for model in present:
                if model != reference and (reference, model) not in found:
                    found.append((model, reference))
        return found

    def describe(self) -> str:
        if self.spec == ALL:
            return "every pair of models"
        if self.spec == BASE:
            return "each fine-tuned variant against its base model"
        return "each model against " + ", ".join(self.references)
