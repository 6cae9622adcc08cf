"""What `vlstress embed-zeroshot` embeds: the zero-shot classifiers of the test sets, or every
zero-shot image set the suites that are on add (vlstress.embedding.sets)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vlstress.embedding.sets import EmbeddingSet


def plan(
    params_files: Sequence[Path],
    sets: str,
    providers: list[str],
    templates: str | None,
    imagenet_maps: str | None = None,
) -> list[tuple[str, EmbeddingSet]]:
    """The (file name, set) pairs of one folder, every input file checked before any model work.

    `sets` is `classifiers` (one per test set, from `templates` or the params' zeroshot.templates
    and, for a timm model, `imagenet_maps` or the params' zeroshot.imagenet_maps; then group
    `classifiers` of the other `providers` modules) or `images` (group `zeroshot` of the
    `providers` modules)."""
    from vlstress.embedding import sets as embedding_sets
    from vlstress.errors import VlstressError
    from vlstress.params import Params
    from vlstress.suites.zeroshot import sets as zeroshot_sets

    config = Params.load(params_files)
    if "zeroshot" not in config.on:
        raise VlstressError(
            "the params switch the zeroshot suite off: there is no zero-shot set to embed"
        )
    if sets == "classifiers":
        # the test sets' classifiers (from `templates`), then what the other providers add
        others = [module for module in providers if module != zeroshot_sets.__name__]
        found = zeroshot_sets.classifiers(config, templates, imagenet_maps)
        found += embedding_sets.from_providers(others, "classifiers", config)
        names = [name for name, _ in found]
        if len(set(names)) < len(names):
            raise VlstressError(f"two classifier sets would write the same file: {names}")
    else:
        found = embedding_sets.from_providers(providers, "zeroshot", config)
    embedding_sets.require_files([item for _, item in found])
    return found
