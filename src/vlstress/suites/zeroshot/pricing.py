"""Pricing: each model embeds the zero-shot test sets (`embed_zeroshot`) and the classifiers'
prompts, classes x templates (`zeroshot_classifiers`). The test sets, their class count and the
prompts per class are left on the context for the suites that read them."""

from __future__ import annotations

from vlstress.cost import sizes
from vlstress.cost.pricing import Pricing, Work


def price(pricing: Pricing) -> None:
    block = pricing.block("zeroshot")
    prompts = sizes.template_count(str(block.get("templates")))
    testsets = pricing.sets_of(block.get("testsets") or {}, sizes.TESTSETS)
    pricing.plan.sets.update(testsets)
    classes = sum(s.classes for s in testsets.values())
    pricing.testsets, pricing.classes, pricing.prompts = testsets, classes, prompts
    # the image sets in as many jobs as the cluster block splits them (each a start-up), and
    # the classifiers in one
    shards = int((pricing.values.get("cluster") or {}).get("embed_shards") or 1)
    pricing.plan.work.append(
        Work(
            "zeroshot",
            f"{len(testsets)} test set(s); classifiers: {classes:,} classes x {prompts} prompts",
            images=sum(s.images for s in testsets.values()),
            texts=classes * prompts,
            text_rows=classes,
            jobs=1 + shards,
            stage="embed_zeroshot",
            text_stage="zeroshot_classifiers",
        )
    )
