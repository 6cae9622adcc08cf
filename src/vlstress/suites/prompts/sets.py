"""The per-template text embeddings of every zero-shot test set, as embedding sets of a model's
classifier job (group `classifiers`): one text pass per model, reused like every set."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from vlstress.embedding.kinds import IMAGE_TEXT_KINDS
from vlstress.embedding.sets import EmbeddingSet, Loaded
from vlstress.params import Params
from vlstress.suites.prompts.block import PromptsParams
from vlstress.suites.prompts.paths import PER_TEMPLATE, testsets
from vlstress.suites.zeroshot.block import ZeroshotParams
from vlstress.workflow.paths import TESTSET


def per_template_set(
    folder: Path, templates: str, counts: tuple[int, ...] | None = None
) -> EmbeddingSet:
    """The (classes x templates x dim) text embeddings of a test set's class names in every
    template of `templates` (a named set or a file); `counts` are checked against the set's size
    before any model work."""
    from vlstress.suites.prompts.counts import template_counts
    from vlstress.suites.zeroshot import templates as template_sets
    from vlstress.testsets import manifest as testsets_manifest

    testset = testsets_manifest.load(folder)
    manifest_file = testsets_manifest.manifest_path(folder)
    prompts, description = template_sets.resolve(templates)
    template_counts(counts, len(prompts), templates)

    def embed(run: Loaded) -> np.ndarray:
        from vlstress.suites.prompts.text import per_template

        return per_template(
            run.model,
            run.tokenizer,
            testset.classes,
            prompts,
            device=run.device,
            precision=run.precision,
        )

    def logit_scale(run: Loaded) -> dict[str, Any]:
        from vlstress.suites.zeroshot.classifier import model_logit_scale

        return model_logit_scale(run.model)

    fields = {
        "dataset": testset.dataset,
        "classes": testset.classes,
        "templates": prompts,
        "templates_source": templates,
    }
    return EmbeddingSet(
        f"{testset.dataset} per template",
        manifest_file,
        [str(manifest_file)],
        "zeroshot-templates",
        fields,
        embed,
        {"templates": templates, "templates_description": description},
        logit_scale,
        IMAGE_TEXT_KINDS,  # prompts are a text tower's
    )


def classifiers(config: Params) -> list[tuple[str, EmbeddingSet]]:
    """Every zero-shot test set's per-template embeddings, from zeroshot.templates (the templates
    its classifier averages)."""
    names = testsets(config)
    if not names:
        return []
    templates = config.block(ZeroshotParams).templates
    counts = config.block(PromptsParams).counts
    return [
        (
            PER_TEMPLATE.format(testset=name),
            per_template_set(Path(TESTSET.format(testset=name)), templates, counts),
        )
        for name in names
    ]
