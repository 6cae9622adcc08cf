"""Pricing: each model embeds every frame of the perturbation sequences; making them (decode,
perturb, write) is CPU work done once."""

from __future__ import annotations

from vlstress.cost.pricing import Pricing, Shared, Work

# frames per sequence of the perturbations (`perturbations.PERTURBATIONS`, which imports PIL: a
# test holds the two equal): 31, translate 41
FRAMES = {"translate": 41}
DEFAULT_FRAMES = 31


def price(pricing: Pricing) -> None:
    block = pricing.block("stability")
    clean = pricing.testset("stability")
    asked = block.get("n_images")
    n = clean.images if asked is None else min(int(asked), clean.images)
    names = [str(p) for p in block.get("perturbations") or []]
    frames = sum(FRAMES.get(p, DEFAULT_FRAMES) for p in names)
    pricing.plan.work.append(
        Work(
            "stability",
            f"{n:,} sequences of {clean.name} x {len(names)} perturbations "
            f"({frames} frames an image)",
            images=n * frames,
            stage="embed_zeroshot",
        )
    )
    pricing.plan.shared.append(
        Shared(
            "perturbation sequences",
            f"{n * frames:,} frames (decode, perturb, write)",
            cpu_s=n * frames * pricing.rates.stability_frame_core_s,
            stage="perturbation_sequences",
            weights={p: FRAMES.get(p, DEFAULT_FRAMES) for p in names},
        )
    )
