"""LoRA adapters through peft: parameter-efficient fine-tuning of one tower of an open_clip model.

`add_adapters` injects a low-rank update `B A` (B zero at init, so the model's outputs are
unchanged before training) beside each named Linear layer of the tower and leaves only the
adapters trainable; `merge` folds the trained adapters into the weights, giving back a plain
open_clip model whose state dict any suite loads like the base's.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from typing import Any

import torch

from vlstress.errors import VlstressError


def _in_tower(name: str, tower: str) -> bool:
    # open_clip keeps the image tower under `visual.`; the text tower is the rest (`transformer.`,
    # or `text.` in the custom-text models)
    return name.startswith("visual.") == (tower == "image")


def target_modules(model: torch.nn.Module, tower: str, modules: Sequence[str]) -> list[str]:
    """The full names of the tower's Linear layers named by `modules` (a name matches a module
    whose name is it or ends with `.<it>`); an error names a module matching nothing."""
    named = dict(model.named_modules())
    linear = [
        name
        for name, module in named.items()
        if isinstance(module, torch.nn.Linear) and _in_tower(name, tower)
    ]
    found: list[str] = []
    for wanted in modules:
        hits = [name for name in linear if name == wanted or name.endswith("." + wanted)]
        if not hits:
            suffixes = sorted({".".join(name.split(".")[-k:]) for name in linear for k in (1, 2)})
            close = difflib.get_close_matches(wanted, suffixes, n=4)
            endings = ", ".join(sorted({name.split(".")[-1] for name in linear}))
            raise VlstressError(
                f"LoRA module {wanted!r} is no Linear layer of the {tower} tower"
                + (f" (close: {', '.join(close)})" if close else "")
                + f"; its Linear layers end with: {endings}"
            )
        fused = [
            name
            for name in hits
            if isinstance(named.get(name.rpartition(".")[0]), torch.nn.MultiheadAttention)
        ]
        if fused:
            raise VlstressError(
                f"LoRA module {wanted!r} ({fused[0]}) is read by nn.MultiheadAttention's fused "
                "kernel, which bypasses an adapter: name the MLP layers (e.g. mlp.c_fc,mlp.c_proj)"
            )
        found += [name for name in hits if name not in found]
    return found


def add_adapters(
    model: torch.nn.Module,
    *,
    rank: int,
    alpha: int,
    dropout: float,
    tower: str,
    modules: Sequence[str],
) -> Any:
    """Inject LoRA adapters into `model` (in place; its forward runs them) and freeze every other
    weight. Returns peft's wrapper, which `merge` needs."""
    from peft import LoraConfig, get_peft_model

    if rank < 1:
        raise VlstressError(f"LoRA rank must be >= 1, not {rank}")
    # a regex is matched against whole module names; a list would match by suffix, and the text
    # tower's `transformer.resblocks.0.mlp.c_fc` ends the image tower's name too
    names = target_modules(model, tower, modules)
    config = LoraConfig(
        r=rank,
        lora_alpha=alpha,
        lora_dropout=dropout,
        target_modules="|".join(re.escape(name) for name in names),
        bias="none",
    )
    return get_peft_model(model, config)


def merge(adapted: Any) -> torch.nn.Module:
    """The model with its adapters folded into the weights (W + alpha/rank * B A): the same
    modules and state dict keys as before `add_adapters`."""
    model: torch.nn.Module = adapted.merge_and_unload()
    for parameter in model.parameters():
        parameter.requires_grad_(True)
    return model


def trainable(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
