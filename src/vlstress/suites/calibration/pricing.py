"""Pricing: it reads the zero-shot embeddings; no model work."""

from __future__ import annotations

from vlstress.cost.pricing import Pricing, Work


def price(pricing: Pricing) -> None:
    pricing.plan.work.append(Work("calibration", "reads the embeddings above: no model work"))
