"""Pricing: each model embeds the cue-conflict stimuli and a classifier of their classes (or of
ImageNet's 1,000 under the `imagenet16` decision) x the zero-shot prompts; the stimuli are
downloaded, already stylised."""

from __future__ import annotations

from vlstress.cost import sizes
from vlstress.cost.pricing import Pricing, Shared, Work

IMAGENET_CLASSES = 1000


def price(pricing: Pricing) -> None:
    block = pricing.block("shape_bias")
    stimuli = sizes.stimuli_size(block, pricing.project)
    pricing.plan.sets[stimuli.name] = stimuli
    heads = IMAGENET_CLASSES if block.get("decision") == "imagenet16" else stimuli.classes
    prompts = pricing.prompts
    pricing.plan.work.append(
        Work(
            "shape_bias",
            f"{stimuli.images:,} stimuli; classifier: {heads:,} classes x {prompts} prompts",
            images=stimuli.images,
            texts=heads * prompts,
            text_rows=heads,
            stage="embed_zeroshot",
            text_stage="zeroshot_classifiers",
        )
    )
    pricing.plan.shared.append(Shared("cue-conflict stimuli", "downloaded, already stylised"))
