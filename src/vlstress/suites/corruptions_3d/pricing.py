"""Pricing: each model embeds the 3D-corrupted copies (test set x corruptions x severities); making
them (decode, depth, blur or fog, write) is CPU work done once, and reading the released
ImageNet-3DCC costs nothing but the listing."""

from __future__ import annotations

from vlstress.cost.pricing import Pricing, Shared, Work, count

# core-seconds per image and severity at 224 px (measured on a 2-core node: a depth of foreground
# near the camera makes far_focus's widest blur hundreds of taps wide, hence the margin)
CORE_S = {
    "fog_3d": 0.005,
    "near_focus": 0.1,
    "far_focus": 0.1,
    "color_quant": 0.001,
    "low_light": 0.01,
    "iso_noise": 0.01,
}


def price(pricing: Pricing) -> None:
    rates = pricing.rates
    block = pricing.block("corruptions_3d")
    clean = pricing.testset("corruptions_3d")
    names = [str(n) for n in block.get("names") or []]
    severities = count(block.get("severities"))
    images = clean.images * len(names) * severities
    pricing.plan.work.append(
        Work(
            "corruptions_3d",
            f"{clean.name} ({clean.images:,}) x {len(names)} 3D corruptions x {severities} "
            "severities",
            images=images,
            stage="embed_zeroshot",
        )
    )
    if block.get("source") != "generate":
        return
    pricing.plan.shared.append(
        Shared(
            "3D-corrupted copies",
            f"{images:,} 3D-corrupted images (decode, depth, corrupt, write)",
            cpu_s=sum(
                clean.images * (rates.decode_core_s + severities * CORE_S.get(n, 0.1))
                for n in names
            ),
            stage="corrupt_3d",
            weights={n: rates.decode_core_s / severities + CORE_S.get(n, 0.1) for n in names},
        )
    )
