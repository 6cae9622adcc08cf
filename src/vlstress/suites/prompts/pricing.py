"""Pricing: each model embeds one text set per template: the zero-shot classes x prompts."""

from __future__ import annotations

from vlstress.cost.pricing import Pricing, Work


def price(pricing: Pricing) -> None:
    classes, prompts = pricing.classes, pricing.prompts
    rows = classes * prompts
    pricing.plan.work.append(
        Work(
            "prompts",
            f"per-template text embeddings: {classes:,} classes x {prompts} prompts",
            texts=rows,
            text_rows=rows,
            stage="zeroshot_classifiers",
        )
    )
