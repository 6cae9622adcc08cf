"""WiSE-FT (Wortsman et al., 2022): the weight-space ensemble (1 - alpha) * base + alpha *
fine-tuned, of two models of one architecture. alpha 0 gives the base's weights and alpha 1 the
fine-tuned ones, bit for bit."""

from __future__ import annotations

from collections.abc import Mapping

import torch

from vlstress.errors import VlstressError


def check_alpha(alpha: float) -> float:
    if not 0.0 <= alpha <= 1.0:
        raise VlstressError(f"WiSE-FT alpha must be in [0, 1], not {alpha:g}")
    return alpha


def interpolate(
    base: Mapping[str, torch.Tensor], finetuned: Mapping[str, torch.Tensor], alpha: float
) -> dict[str, torch.Tensor]:
    """The interpolated state dict. Floating tensors are mixed in float64 and cast back; any other
    tensor (integer buffers) must be equal in both. The end points are copied, not computed, so
    they are exact."""
    check_alpha(alpha)
    if base.keys() != finetuned.keys():
        only = sorted(set(base) ^ set(finetuned))
        side = [f"{k} ({'base' if k in base else 'fine-tuned'} only)" for k in only[:3]]
        raise VlstressError(
            f"WiSE-FT needs two models of one architecture; the state dicts differ in {len(only)} "
            f"tensor(s), e.g. {', '.join(side)}"
        )
    mixed = {}
    for name, zero in base.items():
        one = finetuned[name]
        if zero.shape != one.shape or zero.dtype != one.dtype:
            raise VlstressError(
                f"WiSE-FT: tensor {name} is {tuple(zero.shape)} {zero.dtype} in the base and "
                f"{tuple(one.shape)} {one.dtype} in the fine-tuned model"
            )
        if not zero.is_floating_point():
            if not torch.equal(zero, one):
                raise VlstressError(f"WiSE-FT: integer tensor {name} differs between the models")
            mixed[name] = zero.clone()
        elif alpha == 0.0:
            mixed[name] = zero.clone()
        elif alpha == 1.0:
            mixed[name] = one.clone()
        else:
            value = (1.0 - alpha) * zero.double() + alpha * one.double()
            mixed[name] = value.to(zero.dtype)
    return mixed
