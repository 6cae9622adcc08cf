"""Pricing: each model embeds the corrupted copies (test set x corruptions x severities);
corrupting them (decode, corrupt, write) is CPU work done once."""

from __future__ import annotations

from vlstress.cost.pricing import Pricing, Shared, Work, count


def price(pricing: Pricing) -> None:
    rates = pricing.rates
    block = pricing.block("corruptions")
    clean = pricing.testset("corruptions")
    names = [str(n) for n in block.get("names") or []]
    severities = count(block.get("severities"))
    images = clean.images * len(names) * severities
    pricing.plan.work.append(
        Work(
            "corruptions",
            f"{clean.name} ({clean.images:,}) x {len(names)} corruptions x {severities} severities",
            images=images,
            stage="embed_zeroshot",
        )
    )
    pricing.plan.shared.append(
        Shared(
            "corrupted copies",
            f"{images:,} corrupted images (decode, corrupt, write)",
            cpu_s=sum(
                clean.images * severities * (rates.corruption_s(n) + rates.decode_core_s)
                for n in names
            ),
            stage="corrupt",
            weights={n: rates.corruption_s(n) + rates.decode_core_s for n in names},
        )
    )
