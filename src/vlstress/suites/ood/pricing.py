"""Pricing: each model embeds the OOD sets (`embed_zeroshot`)."""

from __future__ import annotations

from vlstress.cost import sizes
from vlstress.cost.pricing import Pricing, Work


def price(pricing: Pricing) -> None:
    oodsets = pricing.sets_of(pricing.block("ood").get("sets") or {}, sizes.OOD_SETS)
    pricing.plan.sets.update(oodsets)
    pricing.plan.work.append(
        Work(
            "ood",
            f"{len(oodsets)} OOD set(s) ({', '.join(oodsets)})",
            images=sum(s.images for s in oodsets.values()),
            stage="embed_zeroshot",
        )
    )
