"""Pricing: each model embeds the retrieval dataset's images and captions (`embed_retrieval`)."""

from __future__ import annotations

from vlstress.cost.pricing import Pricing, Work


def price(pricing: Pricing) -> None:
    dataset = pricing.plan.dataset
    n_img, n_cap = dataset.images, dataset.captions
    pricing.plan.work.append(
        Work(
            "retrieval",
            f"{n_img:,} images + {n_cap:,} captions ({dataset.name})",
            images=n_img,
            texts=n_cap,
            text_rows=n_cap,
            jobs=1,
            stage="embed_retrieval",
        )
    )
