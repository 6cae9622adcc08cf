"""The kinds of model the registry holds, told apart by an entry's `arch` alone: no model library
is imported here, so the params check, the planners and the report can ask (docs/models.md)."""

from __future__ import annotations

TIMM_PREFIX = "timm:"  # an arch naming a timm ImageNet classifier (vlstress.embedding.timm_models)
IMAGE_TEXT_KINDS = ("open_clip",)  # kinds with a text tower: retrieval, caption sets, prompts


def model_kind(arch: str) -> str:
    """`timm` for `timm:<name>` (a supervised ImageNet classifier), else `open_clip`."""
    return "timm" if str(arch).startswith(TIMM_PREFIX) else "open_clip"
