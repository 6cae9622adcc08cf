"""Numeric precision of model forwards: `fp32` (default) or `amp` (CUDA autocast).

amp runs the forward under `torch.autocast` in bfloat16 where the GPU supports it, else
float16; the embeddings are cast back to float32 after the model. amp is refused on every
other device: CPU autocast would be a different (bfloat16) computation than fp32 and seldom
faster, and a run must never compute something else than what its provenance says.
"""

from __future__ import annotations

import contextlib

from vlstress.errors import VlstressError

PRECISIONS = ("fp32", "amp")


def check(precision: str, device: str) -> None:
    """Error unless `precision` can run on the resolved `device`."""
    if precision not in PRECISIONS:
        raise VlstressError(f"unknown precision {precision!r}: use {' or '.join(PRECISIONS)}")
    if precision == "amp" and not device.startswith("cuda"):
        raise VlstressError(
            f"precision 'amp' needs a CUDA device, this step runs on {device!r}: "
            "set embed.precision: fp32 (or --precision fp32)"
        )


def autocast_dtype(device: str) -> str:
    """The autocast dtype of amp on a CUDA device: bfloat16 where the GPU has it natively, else
    float16."""
    import torch

    with torch.cuda.device(device):
        return "bfloat16" if torch.cuda.is_bf16_supported(including_emulation=False) else "float16"


def autocast(precision: str, device: str):
    """The context the model forward runs in (checked first)."""
    import torch

    check(precision, device)
    if precision == "fp32":
        return contextlib.nullcontext()
    return torch.autocast(device_type="cuda", dtype=getattr(torch, autocast_dtype(device)))


def describe(precision: str, device: str) -> dict:
    """Provenance of the precision: the mode and, for amp, the autocast dtype."""
    check(precision, device)
    if precision == "fp32":
        return {"precision": "fp32"}
    return {"precision": "amp", "autocast_dtype": autocast_dtype(device)}
