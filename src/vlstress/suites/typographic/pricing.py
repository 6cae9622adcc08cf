"""Pricing: each model embeds the typographic copy of its test set; drawing it is CPU work done
once."""

from __future__ import annotations

from vlstress.cost.pricing import Pricing, Shared, Work


def price(pricing: Pricing) -> None:
    clean = pricing.testset("typographic")
    pricing.plan.work.append(
        Work(
            "typographic",
            f"a copy of {clean.name} with a wrong class name written",
            images=clean.images,
            stage="embed_zeroshot",
        )
    )
    pricing.plan.shared.append(
        Shared(
            "typographic copy",
            f"{clean.images:,} images (priced as mixing one image: decode, draw, write)",
            cpu_s=clean.images * pricing.rates.image_variant_core_s,
            stage="typographic",
        )
    )
