"""Pricing: each model embeds the stylized copy; AdaIN makes it once, on a GPU (priced as the
measured architecture's image rate scaled by GFLOPs, as every architecture is)."""

from __future__ import annotations

from vlstress.cost.pricing import Pricing, Shared, Work
from vlstress.cost.profile import arch_cost

# AdaIN (adain.py) at 224 px: the VGG encoder to relu4_1 on the content and on the style image,
# then the decoder, 24.2 GFLOPs each (a test counts the modules' convolutions)
ADAIN_GFLOPS_224 = 72.66


def price(pricing: Pricing) -> None:
    rates = pricing.rates
    clean = pricing.testset("stylized")
    px = int(pricing.block("stylized").get("size") or 224)
    gflops = ADAIN_GFLOPS_224 * (px / 224) ** 2
    reference = arch_cost(rates.reference_arch)
    pricing.plan.work.append(
        Work(
            "stylized",
            f"a stylized copy of {clean.name} ({clean.images:,})",
            images=clean.images,
            stage="embed_zeroshot",
        )
    )
    pricing.plan.shared.append(
        Shared(
            "stylized copy",
            f"{clean.images:,} images through AdaIN at {px} px ({gflops:.0f} GFLOPs each: VGG "
            "encoder on the content and the style image, decoder)",
            cpu_s=clean.images * rates.image_variant_core_s,
            arch=rates.reference_arch,
            image_passes=clean.images * gflops / reference.image_gflops,
            jobs=1,
            stage="stylize",
        )
    )
