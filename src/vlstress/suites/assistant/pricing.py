"""Pricing: an assistant generates answers (no embedding pass): not priced by the GFLOPs table;
a note names the assistants and the questions each answers."""

from __future__ import annotations

from vlstress.cost.pricing import Pricing


def price(pricing: Pricing) -> None:
    if not pricing.assistants:
        return
    sets = pricing.plan.sets
    asked = [
        sets[name] for name in pricing.block("assistant").get("testsets") or [] if name in sets
    ]
    pricing.plan.notes.append(
        f"not priced: the assistant(s) {', '.join(pricing.assistants)}, "
        f"{sum(s.images for s in asked):,} questions each (generation; docs/models.md gives "
        "measured questions per second)"
    )
