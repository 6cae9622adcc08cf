"""Pricing: each model embeds the image variants (methods x lams x seeds x the retrieval images);
mixing and patching them is CPU work done once."""

from __future__ import annotations

from vlstress.cost.pricing import Pricing, Shared, Work, count


def price(pricing: Pricing) -> None:
    n_img = pricing.plan.dataset.images
    block = pricing.block("image_variants")
    variants = count(block.get("methods")) * count(block.get("lams"))
    variants *= count(block.get("seeds"))
    pricing.plan.work.append(
        Work(
            "rococo_image",
            f"{variants} variants (methods x lams x seeds) x {n_img:,} images",
            images=variants * n_img,
            stage="embed_retrieval",
        )
    )
    pricing.plan.shared.append(
        Shared(
            "image variants",
            f"mixing/patching {variants} x {n_img:,} images",
            cpu_s=variants * n_img * pricing.rates.image_variant_core_s,
            stage="image_variants",
        )
    )
