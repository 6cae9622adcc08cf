"""The zero-shot sets of this suite: each test set's classifier (group `classifiers`) and its
images (group `zeroshot`), as embedding sets of a model's two zero-shot jobs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from vlstress.embedding.sets import EmbeddingSet, Loaded, testset_images
from vlstress.io import sha256_file
from vlstress.params import Params
from vlstress.suites.zeroshot import paths
from vlstress.suites.zeroshot.block import ZeroshotParams, parse_imagenet_maps
from vlstress.testsets.imagenet_map import map_path
from vlstress.workflow.paths import CLASSIFIER, ZEROSHOT_EMB


def classifier(
    folder: Path,
    templates: str,
    classes: list[str] | None = None,
    imagenet_map: str | None = None,
) -> EmbeddingSet:
    """The zero-shot classifier of a test set's class names (or of `classes`, e.g. the 1000
    ImageNet classes a set's decisions are mapped from): one weight row per class from the prompt
    templates (a named set or a file, `vlstress.suites.zeroshot.templates`). For a supervised
    ImageNet classifier (timm), the class map of the set's classes instead (`imagenet_map`: the
    map file given for the set, `classifier.class_map`); for a model with a fine-tuned head whose
    classes hold every class of the set, the head's rows of them (vlstress.embedding.heads)."""
    from vlstress.suites.zeroshot import templates as template_sets
    from vlstress.testsets import manifest as testsets

    testset = testsets.load(folder)
    names = testset.classes if classes is None else classes
    manifest_file = testsets.manifest_path(folder)
    prompts, description = template_sets.resolve(templates)

    def embed(run: Loaded) -> np.ndarray:
        from vlstress.embedding import heads
        from vlstress.suites.zeroshot.classifier import build, class_map

        if run.spec.kind == "timm":
            return class_map(testset, imagenet_map, classes)
        head = heads.rows_for(run.model, names)
        if head is not None:  # a fine-tuned head of these classes scores them (logit scale 1)
            return head
        return build(
            run.model,
            run.tokenizer,
            names,
            prompts,
            device=run.device,
            precision=run.precision,
        )

    def logit_scale(run: Loaded) -> dict[str, Any]:
        from vlstress.embedding import heads
        from vlstress.suites.zeroshot.classifier import CLASS_MAP, class_map_rule, model_logit_scale

        if run.spec.kind == "timm":  # scores are log-probabilities: no scale
            return {
                "logit_scale": 1.0,
                "scores": CLASS_MAP,
                "imagenet_map": map_source,
                "class_map_rule": class_map_rule(testset, imagenet_map, classes),
            }
        if heads.of(run.model) is None:
            return model_logit_scale(run.model)
        if heads.rows_for(run.model, names) is not None:  # the rows hold the scale
            return {"logit_scale": 1.0, "weights": "fine-tuned head"}
        return {
            **model_logit_scale(run.model),
            "weights": "zero-shot prompts (the set's classes are not all the head's)",
        }

    fields = {
        "dataset": testset.dataset,
        "classes": names,
        "templates": prompts,
        "templates_source": templates,
    }
    # the 1000 ImageNet classes themselves (`classes`) read no map
    map_files = [] if imagenet_map is None or classes else [str(map_path(imagenet_map))]
    # the map by file name and content (never an absolute path: the sidecar is the same in any
    # checkout); none given: the set's own ImageNet ids
    map_source = (
        {"file": Path(map_files[0]).name, "sha256": sha256_file(map_files[0])}
        if map_files
        else "class ids"
    )
    return EmbeddingSet(
        f"{testset.dataset} classifier" + ("" if classes is None else f" ({len(names)} classes)"),
        manifest_file,
        [str(manifest_file), *map_files],
        "zeroshot-classifier",
        fields,
        embed,
        {"templates": templates, "templates_description": description},
        logit_scale,
    )


def classifiers(
    config: Params, templates: str | None = None, imagenet_maps: str | None = None
) -> list[tuple[str, EmbeddingSet]]:
    """The classifier of every test set, from `templates` (default: zeroshot.templates) and, for a
    timm model, `imagenet_maps` (default: zeroshot.imagenet_maps)."""
    found = list(zip(paths.testsets(config), paths.testset_folders(config)))
    if not found:
        return []
    block = config.block(ZeroshotParams)
    chosen = templates or block.templates
    maps = parse_imagenet_maps(imagenet_maps if imagenet_maps is not None else block.imagenet_maps)
    return [
        (CLASSIFIER.format(testset=name), classifier(Path(folder), chosen, None, maps.get(name)))
        for name, folder in found
    ]


def image_sets(found: list[paths.Evaluation]) -> list[tuple[str, EmbeddingSet]]:
    """The images each evaluation reads, as sets named by their file inside the model's zero-shot
    folder."""
    files = [e.embeddings.removeprefix(f"{ZEROSHOT_EMB}/") for e in found]
    return [
        (file, testset_images(Path(e.testset), file.removesuffix(".npy")))
        for file, e in zip(files, found)
    ]


def zeroshot(config: Params) -> list[tuple[str, EmbeddingSet]]:
    """The images of every test set (the clean evaluations)."""
    return image_sets(paths.evaluations(config))
