"""Parameters of each tower, counted on torch's meta device: the model is built without memory,
weights or random numbers (open_clip's `create_model(arch, pretrained=None)`, timm's
`create_model(name, pretrained=False)`), so counting a ViT-bigG costs what building its modules
does. A model that cannot be built here (e.g. a text tower whose config is on the hub and no
network) counts None: never a guess."""

from __future__ import annotations

import logging
from functools import cache

log = logging.getLogger(__name__)
SCALES = ("logit_scale", "logit_bias")  # an image-text model's own, in neither tower


@cache
def open_clip_towers(arch: str) -> tuple[int | None, int | None]:
    """(image tower, text tower) parameters of an open_clip architecture: the text tower is every
    parameter outside the image tower but the logit scale and bias (CoCa's decoder included)."""
    import open_clip
    import torch

    from vlstress.embedding.models import add_model_configs

    try:
        add_model_configs()
        config = open_clip.get_model_config(arch) or {}
        if (config.get("text_cfg") or {}).get("hf_model_name"):
            # the text tower's config is a hub download: the image tower alone, built offline
            with torch.device("meta"):
                visual = open_clip.model._build_vision_tower(
                    config["embed_dim"], config["vision_cfg"], config.get("quick_gelu", False)
                )
            return int(sum(p.numel() for p in visual.parameters())), None
        with torch.device("meta"):
            model = open_clip.create_model(arch, pretrained=None, device="meta")
    except Exception as exc:  # noqa: BLE001 - unknown arch, a config out of reach: not counted
        log.warning("parameters of %s not counted (%s)", arch, exc)
        return None, None
    image = sum(p.numel() for p in model.visual.parameters())
    named = dict(model.named_parameters())
    total = sum(p.numel() for p in named.values())
    scales = sum(named[name].numel() for name in SCALES if name in named)
    return int(image), int(total - image - scales)


@cache
def timm_model(name: str, tag: str | None) -> tuple[int | None, int | None]:
    """(parameters, input side in pixels of the tag's pretrained config) of a timm model."""
    import timm
    import torch

    full = f"{name}.{tag}" if tag else name
    try:
        with torch.device("meta"):
            model = timm.create_model(full, pretrained=False)
        size = timm.data.resolve_model_data_config(model)["input_size"]
    except Exception as exc:  # noqa: BLE001 - unknown name or tag: not counted
        log.warning("parameters of timm model %s not counted (%s)", full, exc)
        return None, None
    return int(sum(p.numel() for p in model.parameters())), int(size[-1])


def loaded_towers(model) -> tuple[int | None, int | None]:
    """(image tower, text tower) parameters of a loaded model: an open_clip model's as
    `open_clip_towers` counts them; a timm classifier's all in the image tower; (None, None) for
    anything else (an assistant)."""
    named = dict(model.named_parameters())
    total = sum(p.numel() for p in named.values())
    visual = getattr(model, "visual", None)
    if visual is not None:
        image = sum(p.numel() for p in visual.parameters())
        scales = sum(named[name].numel() for name in SCALES if name in named)
        return int(image), int(total - image - scales)
    if getattr(model, "class_logits", False):  # vlstress.embedding.timm_models' classifier
        return int(total), None
    return None, None


def loaded_resolution(model) -> int | None:
    """The input side of a loaded timm classifier's pretrained config (None for other models)."""
    config = getattr(getattr(model, "net", None), "pretrained_cfg", None) or {}
    size = config.get("input_size")
    return int(size[-1]) if size else None


def entry(arch: str, tag: str | None) -> tuple[int | None, int | None, int | None]:
    """(image tower, text tower, timm input side) of a registry entry, counted on the meta device
    (`tag`: a timm tag, whose pretrained config may set another input side); None where it cannot
    be counted here (an assistant, a hub repository)."""
    from vlstress.embedding.kinds import TIMM_PREFIX, model_kind

    kind = model_kind(arch)
    if kind == "timm":
        total, side = timm_model(arch.removeprefix(TIMM_PREFIX), tag)
        return total, None, side
    if kind == "open_clip" and not arch.startswith("hf-hub:"):
        return (*open_clip_towers(arch), None)
    return None, None, None
