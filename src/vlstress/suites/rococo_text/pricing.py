"""Pricing: each model embeds the caption sets (sets x the retrieval captions); making them and
their statistics is CPU work done once, the EI scorer one GPU job."""

from __future__ import annotations

from vlstress.cost.pricing import Pricing, Shared, Work, count


def price(pricing: Pricing) -> None:
    n_cap = pricing.plan.dataset.captions
    rates = pricing.rates
    sets = count(list(pricing.block("text_variants").get("sets") or {}))
    pricing.plan.work.append(
        Work(
            "rococo_text",
            f"{sets} caption sets x {n_cap:,} captions",
            texts=sets * n_cap,
            text_rows=sets * n_cap,
            stage="embed_retrieval",
        )
    )
    pricing.plan.shared.append(
        Shared(
            "caption sets",
            f"{sets} sets x {n_cap:,} captions, and their statistics",
            cpu_s=n_cap * (sets * rates.text_variant_core_s + rates.text_stats_core_s),
            stage="text_variants",
        )
    )
    scorer = str((pricing.block("ei").get("scorer") or {}).get("arch"))
    pricing.plan.shared.append(
        Shared(
            "EI scores",
            f"{n_cap:,} captions and their one-word deletions ({scorer} scorer)",
            gpu_s=n_cap * rates.ei_gpu_s,  # measured per caption (the benchmark's scorer)
            arch=scorer,
            jobs=1,
            stage="ei_scores",
        )
    )
