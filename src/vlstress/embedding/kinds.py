"""The kinds of model the registry holds, told apart by an entry's `arch` alone: no model library
is imported here, so the params check, the planners and the report can ask (docs/models.md)."""

from __future__ import annotations

TIMM_PREFIX = "timm:"  # an arch naming a timm ImageNet classifier (vlstress.embedding.timm_models)
LLAVA = "llava"  # `llava` or `llava:<config>`: an assistant (vlstress.embedding.llava_models)
IMAGE_TEXT_KINDS = ("open_clip",)  # kinds with a text tower: retrieval, caption sets, prompts
# kinds that embed images: every stage over the model axis takes them unless it names its kinds
EMBEDDING_KINDS = ("open_clip", "timm")
ALL_KINDS = (*EMBEDDING_KINDS, LLAVA)


def model_kind(arch: str) -> str:
    """`timm` for `timm:<name>` (a supervised ImageNet classifier), `llava` for `llava` and
    `llava:<config>` (an assistant that answers questions about an image), else `open_clip`."""
    arch = str(arch)
    if arch.startswith(TIMM_PREFIX):
        return "timm"
    if arch == LLAVA or arch.startswith(f"{LLAVA}:"):
        return LLAVA
    return "open_clip"


def stage_kinds(declared: tuple[str, ...]) -> tuple[str, ...]:
    """The kinds a stage over the model axis runs for: those it declares, else the embedding
    kinds (an assistant takes part only where a stage names it)."""
    return declared or EMBEDDING_KINDS
