"""The cost figures of an open_clip architecture missing from open_clip's profile table
(`vlstress.cost.profile`), counted as the timm classifiers are: torch's FlopCounterMode over one
image and one caption through the model built on the meta device (no weights, no memory), at its
own image size and context length, two FLOPs per multiply-add (the table's convention). This
imports torch and open_clip: `vlstress cost` counts only the architectures the table lacks."""

from __future__ import annotations

from vlstress.cost.profile import ArchCost
from vlstress.errors import VlstressError


def open_clip_arch(arch: str) -> ArchCost:
    import open_clip
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from vlstress.embedding.models import add_model_configs

    try:
        add_model_configs()
        with torch.device("meta"):
            model = open_clip.create_model(arch, pretrained=None, device="meta").eval()
            model.requires_grad_(False)  # the flop counter tracks no autograd graph
            size = model.visual.image_size
            side = int(max(size) if isinstance(size, (tuple, list)) else size)
            length = int(getattr(model, "context_length", None) or 77)
            with torch.no_grad():
                image = FlopCounterMode(display=False)
                with image:
                    features = model.encode_image(torch.empty(1, 3, side, side))
                text = FlopCounterMode(display=False)
                with text:
                    model.encode_text(torch.zeros(1, length, dtype=torch.long))
    except Exception as exc:  # noqa: BLE001 - an arch the meta device cannot build or run
        raise VlstressError(
            f"architecture {arch!r} is not in the cost table and could not be counted ({exc}); "
            f"give its figures with --gflops {arch}=IMAGE_GFLOPS,TEXT_GFLOPS,EMBED_DIM"
        ) from None
    return ArchCost(
        arch,
        side,
        int(features.shape[-1]),
        image.get_total_flops() / 1e9,
        text.get_total_flops() / 1e9,
        sum(p.numel() for p in model.parameters()) / 1e6,
    )
