"""The pool: the candidates of the kinds asked for, counted, filtered, their slugs unique."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vlstress.pool import attributes, entries
from vlstress.pool.entries import Candidate
from vlstress.pool.filters import Filters, apply


def counter(count: bool):
    """(attributes, arch, tag) -> the attributes with the towers counted on the meta device (or
    unchanged, without `count`)."""
    if not count:
        return lambda found, arch, tag: found

    def counted(found: dict[str, Any], arch: str, tag: str | None) -> dict[str, Any]:
        from vlstress.pool import counts

        return attributes.with_counts(found, *counts.entry(arch, tag))

    return counted


def timm_names(every: bool) -> list[str]:
    """timm's ImageNet-1k classifiers: the testbed's that timm has, or every one timm lists."""
    if not every:
        return [row["timm"] for row in entries.testbed_names() if row["timm"]]
    import timm

    return [name for name in timm.list_pretrained() if entries.IN1K_HEAD.search(name)]


def pool(
    filters: Filters,
    *,
    timm_all: bool = False,
    models: Mapping[str, Mapping[str, Any]] | None = None,
    count: bool = True,
) -> list[Candidate]:
    """Every candidate of `filters.kinds` that the filters keep (`models`: the registry whose
    fine-tuned checkpoints `finetuned` takes)."""
    count_fn = counter(count)
    found: list[Candidate] = []
    if "open_clip" in filters.kinds:
        import open_clip

        found += entries.open_clip_candidates(open_clip.list_pretrained(), count_fn)
    if "timm" in filters.kinds:
        found += entries.timm_candidates(timm_names(timm_all), count_fn)
    if "llava" in filters.kinds:
        found += entries.llava_candidates()
    if "finetuned" in filters.kinds:
        found += entries.finetuned_candidates(models or {}, count_fn)
    return entries.unique(apply(filters, found))
