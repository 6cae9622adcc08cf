"""Pricing: each fine-tuning variant is one GPU job on the base architecture, done once: its
steps' pairs forward and backward (the mixed images and altered captions too under SC/VC; one
image and one class prompt a pair under FLYP; the images only under the standard loss)."""

from __future__ import annotations

from vlstress.cost.pricing import Pricing, Shared


def price(pricing: Pricing) -> None:
    rates = pricing.rates
    block = pricing.block("finetune")
    base = str((block.get("base") or {}).get("arch"))
    pairs = int(block.get("steps") or 0) * int(block.get("batch_size") or 0)
    pairs *= int(block.get("accumulate") or 1) * int(block.get("nproc") or 1)
    # (name, what, images, texts, stage, variant) of each training job
    jobs: list[tuple[str, str, int, int, str, str]] = []
    for name, weights in (block.get("variants") or {}).items():
        images = pairs * (1 + bool((weights or {}).get("w_vc")))  # + the mixed images (VC)
        texts = pairs * (1 + bool((weights or {}).get("w_sc")))  # + the altered captions (SC)
        what = f"{images:,} images and {texts:,} captions"
        jobs.append((name, what, images, texts, "finetune", name))
    for name, spec in ((block.get("labelled") or {}).get("variants") or {}).items():
        loss = (spec or {}).get("loss")
        if loss == "flyp":  # one image and one class prompt per pair
            what = f"{pairs:,} images and {pairs:,} class prompts"
            jobs.append((f"{name} ({loss})", what, pairs, pairs, "finetune_labelled", name))
        else:  # standard: the image tower and a head; the text tower only builds the head
            what = f"{pairs:,} images"
            jobs.append((f"{name} ({loss})", what, pairs, 0, "finetune_labelled", name))
    for name, what, images, texts, stage, variant in jobs:
        pricing.plan.shared.append(
            Shared(
                f"fine-tuning {name}",
                f"{what}, forward and backward ({base})",
                arch=base,
                image_passes=images * rates.gradient_pass,
                texts=texts * rates.gradient_pass,
                jobs=1,
                stage=stage,
                weights={variant: 1.0},
            )
        )
