"""The fine-tuning loop: AdamW, linear warm-up + cosine decay, gradient accumulation, optional
frozen towers, mixed precision on CUDA, checkpoints that a killed run resumes from, data parallel
under torchrun.

Determinism: the batches of a step are a function of (seed, step) (`TrainingPairs.rows`), and a
checkpoint holds the model, optimizer, scheduler, grad scaler, every RNG state and the log so far,
so a run killed at any point and started again with the same command ends at the same weights as
an uninterrupted run (on the same machine and thread count). A checkpoint whose settings differ
from the run's is not resumed from (it is replaced).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import os
import random
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from vlstress.errors import VlstressError
from vlstress.suites.finetune import losses
from vlstress.suites.finetune.data import ClassPrompts, LabelledImages, TrainingPairs

log = logging.getLogger(__name__)

FREEZE = ("image", "text")
# "sc_vc": CLIP loss + w_sc * SC + w_vc * VC on captioned images (TrainingPairs);
# "flyp": FLYP, the CLIP loss on labelled images and prompts of their classes (ClassPrompts);
# "standard": cross-entropy through the model's head (vlstress.embedding.heads; LabelledImages)
LOSSES = ("sc_vc", "flyp", "standard")


@dataclass(frozen=True)
class TrainConfig:
    steps: int
    batch_size: int  # samples per optimizer step (split between micro-batches and processes)
    lr: float
    loss: str = "sc_vc"  # one of LOSSES
    weight_decay: float = 0.1
    warmup: int = 0
    accumulate: int = 1  # micro-batches per optimizer step
    w_sc: float = 1.0
    w_vc: float = 1.0
    form: str = losses.DEFAULT_FORM
    margin: float = 0.2
    freeze: str | None = None  # "image" | "text": that tower does not train
    checkpoint_every: int = 0  # steps between resume checkpoints (0 = none)
    seed: int = 0
    precision: str = "fp32"
    # LoRA (vlstress.suites.finetune.lora): rank 0 = every weight trains
    lora_rank: int = 0
    lora_alpha: int = 16
    lora_dropout: float = 0.0
    lora_tower: str = "image"
    lora_modules: tuple[str, ...] = ("mlp.c_fc", "mlp.c_proj")

    def check(self) -> None:
        problems = []
        if self.steps < 1 or self.batch_size < 1 or self.accumulate < 1:
            problems.append("steps, batch_size and accumulate must be >= 1")
        if self.batch_size % self.accumulate:
            problems.append(
                f"batch_size {self.batch_size} is not a multiple of accumulate {self.accumulate}"
            )
        if not self.lr > 0 or self.weight_decay < 0 or self.warmup < 0 or self.checkpoint_every < 0:
            problems.append("lr must be > 0; weight_decay, warmup and checkpoint_every >= 0")
        if self.loss not in LOSSES:
            problems.append(f"unknown loss {self.loss!r} (known: {', '.join(LOSSES)})")
        if self.form not in losses.FORMS:
            problems.append(f"unknown loss form {self.form!r} (known: {', '.join(losses.FORMS)})")
        if self.freeze not in (None, *FREEZE):
            problems.append(f"freeze must be image, text or null, not {self.freeze!r}")
        if self.w_sc < 0 or self.w_vc < 0:
            problems.append("w_sc and w_vc must be >= 0")
        if self.lora_rank < 0:
            problems.append(f"LoRA rank must be >= 0, not {self.lora_rank}")
        if self.lora_rank and self.lora_alpha < 1:
            problems.append(f"LoRA alpha must be >= 1, not {self.lora_alpha}")
        if self.lora_rank and not 0 <= self.lora_dropout < 1:
            problems.append(f"LoRA dropout must be in [0, 1), not {self.lora_dropout}")
        if self.lora_rank and not self.lora_modules:
            problems.append("LoRA needs at least one module to adapt")
        if self.lora_rank and self.freeze:
            problems.append("LoRA trains only its adapters: freeze must be null")
        if self.lora_rank and self.lora_tower not in FREEZE:
            problems.append(f"LoRA tower must be image or text, not {self.lora_tower!r}")
        if problems:
            raise VlstressError("fine-tuning settings: " + "; ".join(problems))

    def settings(self) -> dict[str, Any]:
        """What the run depends on: without LoRA, none of its settings (editing them changes
        nothing of a full fine-tuning); with it, peft's version too (the resume state holds peft's
        module names). FLYP and standard fine-tuning have no SC/VC terms: their settings are left
        out."""
        found = asdict(self)
        if self.loss != "sc_vc":
            found = {k: v for k, v in found.items() if k not in ("w_sc", "w_vc", "form", "margin")}
        if not self.lora_rank:
            return {k: v for k, v in found.items() if not k.startswith("lora_") or k == "lora_rank"}
        import peft

        return {**found, "peft": peft.__version__}

    def fingerprint(self) -> str:
        return hashlib.sha256(json.dumps(self.settings(), sort_keys=True).encode()).hexdigest()[:16]


def lr_factor(step: int, steps: int, warmup: int) -> float:
    """Linear warm-up over `warmup` steps, then cosine decay to 0 at `steps`."""
    if warmup and step < warmup:
        return (step + 1) / warmup
    progress = (step - warmup) / max(1, steps - warmup)
    return 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))


def _decay(name: str, param: torch.nn.Parameter) -> bool:
    """open_clip's rule: no weight decay on gains, biases, embeddings of rank < 2 and the logit
    scale."""
    return param.ndim >= 2 and not any(key in name for key in ("bn", "ln", "bias", "logit_scale"))


def optimizer_for(model: torch.nn.Module, config: TrainConfig) -> torch.optim.Optimizer:
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    if not named:
        raise VlstressError("nothing to train: every parameter is frozen")
    groups = [
        {"params": [p for n, p in named if _decay(n, p)], "weight_decay": config.weight_decay},
        {"params": [p for n, p in named if not _decay(n, p)], "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(
        [g for g in groups if g["params"]], lr=config.lr, betas=(0.9, 0.98), eps=1e-6
    )


def freeze(model, tower: str | None) -> None:
    if tower == "image":
        model.lock_image_tower(unlocked_groups=0, freeze_bn_stats=True)
    elif tower == "text":
        model.lock_text_tower(unlocked_layers=0, freeze_layer_norm=True)


# ------------------------------------------------------------------ resume checkpoints


def _rng_state() -> dict[str, Any]:
    state = {
        "python": random.getstate(),
        "numpy": np.random.get_state(),
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def _set_rng_state(state: dict[str, Any]) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def save_checkpoint(path: Path, **state: Any) -> None:
    from vlstress.io import atomic_path

    with atomic_path(path) as tmp:
        torch.save(state, tmp)


def load_checkpoint(path: Path, fingerprint: str) -> dict[str, Any] | None:
    """The resume state at `path` when it was written by a run with the same settings, else None."""
    if not path.is_file():
        return None
    try:
        state = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as exc:  # a checkpoint from another torch version, or damaged: start again
        log.warning("resume checkpoint %s is unreadable (%s): starting from step 0", path, exc)
        return None
    if state.get("fingerprint") != fingerprint:
        log.warning(
            "resume checkpoint %s was written with other settings: starting from step 0", path
        )
        return None
    return state


# ------------------------------------------------------------------ the loop


@dataclass
class Distributed:
    rank: int = 0
    world_size: int = 1

    @property
    def main(self) -> bool:
        return self.rank == 0


def encode(net, pixels, mixed, tokens, altered):
    """(image, text, mixed image, altered text) features, normalised, from ONE forward of the model
    (under DDP a second forward before the backward would break its gradient bookkeeping)."""
    out = net(torch.cat([pixels, mixed]), torch.cat([tokens, altered]))
    image_all, text_all = (
        (out["image_features"], out["text_features"]) if isinstance(out, dict) else out[:2]
    )
    image_all = torch.nn.functional.normalize(image_all.float(), dim=-1)
    text_all = torch.nn.functional.normalize(text_all.float(), dim=-1)
    n = len(pixels)
    return image_all[:n], text_all[:n], image_all[n:], text_all[n:]


def robust_loss(net, model, batch, clip_loss, config: TrainConfig):
    """(loss, terms) of a batch of TrainingPairs: CLIP + w_sc * SC + w_vc * VC, with the margins."""
    pixels, mixed, tokens, altered = batch
    image, text, image_alt, text_alt = encode(net, pixels, mixed, tokens, altered)
    loss, terms = losses.objective(
        clip_loss,
        image,
        text,
        text_alt,
        image_alt,
        model.logit_scale.exp(),
        w_sc=config.w_sc,
        w_vc=config.w_vc,
        form=config.form,
        margin=config.margin,
    )
    terms.update(losses.margins(image, text, text_alt, image_alt))
    return loss, terms


def flyp_loss(net, model, batch, clip_loss, config: TrainConfig):
    """(loss, terms) of a batch of ClassPrompts: the CLIP loss of images against their class
    prompts (FLYP; two images of one class in a batch are each other's negatives, as in FLYP)."""
    pixels, tokens = batch
    out = net(pixels, tokens)
    image, text = (
        (out["image_features"], out["text_features"]) if isinstance(out, dict) else out[:2]
    )
    image = torch.nn.functional.normalize(image.float(), dim=-1)
    text = torch.nn.functional.normalize(text.float(), dim=-1)
    loss = clip_loss(image, text, model.logit_scale.exp())
    return loss, {"clip": float(loss.detach()), "total": float(loss.detach())}


def standard_loss(net, model, batch, clip_loss, config: TrainConfig):
    """(loss, terms) of a batch of LabelledImages: cross-entropy of the head's logits of the
    normalised image embeddings (the text tower takes no part), with the batch's accuracy."""
    pixels, labels = batch
    out = net(pixels, None)
    image = out["image_features"] if isinstance(out, dict) else out[0]
    logits = model.vlstress_head(torch.nn.functional.normalize(image.float(), dim=-1))
    loss = torch.nn.functional.cross_entropy(logits, labels)
    accuracy = float((logits.argmax(dim=1) == labels).float().mean())
    return loss, {"ce": float(loss.detach()), "accuracy": accuracy, "total": float(loss.detach())}


STEP_LOSS = {"sc_vc": robust_loss, "flyp": flyp_loss, "standard": standard_loss}


def train(
    model,
    pairs: TrainingPairs | ClassPrompts | LabelledImages,
    config: TrainConfig,
    *,
    device: str,
    resume_path: Path | None = None,
    dist: Distributed | None = None,
    progress: bool = True,
    stop_after: int | None = None,
    on_step: Callable[[int], None] | None = None,
) -> list[dict[str, float]]:
    """Fine-tune `model` in place; return the training log (one row per optimizer step).

    `stop_after` ends the run after that many steps as a kill would (no final checkpoint):
    a test hook. `on_step(step)` is called after each step (after its checkpoint, if any).
    """
    from open_clip.loss import ClipLoss
    from tqdm.auto import tqdm

    from vlstress.embedding.precision import autocast

    config.check()
    dist = dist or Distributed()
    autocast(config.precision, device)  # amp is refused off CUDA before anything trains
    freeze(model, config.freeze)
    if config.loss == "standard":  # the head replaces the text tower, which does not train
        if getattr(model, "vlstress_head", None) is None:
            raise VlstressError("standard fine-tuning needs a head (vlstress.embedding.heads)")
        for name, parameter in model.named_parameters():
            if not name.startswith("visual.") and not name.startswith("vlstress_head."):
                parameter.requires_grad_(False)
    net = model
    if dist.world_size > 1:
        net = torch.nn.parallel.DistributedDataParallel(
            model, device_ids=[torch.device(device).index] if device.startswith("cuda") else None
        )
    model.train()
    if config.freeze == "image":
        model.visual.eval()  # frozen batch-norm statistics stay frozen
    if config.lora_rank:  # only the adapters train: batch-norm statistics stay the base's
        for module in model.modules():
            if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
                module.eval()
    optimizer = optimizer_for(model, config)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: lr_factor(step, config.steps, config.warmup)
    )
    use_scaler = config.precision == "amp" and _autocast_dtype(device) == "float16"
    scaler = torch.amp.GradScaler("cuda", enabled=use_scaler)
    clip_loss = ClipLoss(
        local_loss=True, gather_with_grad=True, rank=dist.rank, world_size=dist.world_size
    )
    history: list[dict[str, float]] = []
    start = 0
    torch.manual_seed(config.seed)
    state = load_checkpoint(resume_path, config.fingerprint()) if resume_path is not None else None
    if state is not None:
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        scaler.load_state_dict(state["scaler"])
        _set_rng_state(state["rng"])
        history, start = state["history"], state["step"]
        log.info("resumed from %s at step %d of %d", resume_path, start, config.steps)
    bar = tqdm(
        range(start, config.steps),
        initial=start,
        total=config.steps,
        desc="fine-tune",
        unit="step",
        disable=not (progress and dist.main),
    )
    for step in bar:
        rows = pairs.rows(step, config.batch_size, config.seed, dist.rank, dist.world_size)
        optimizer.zero_grad(set_to_none=True)
        terms_sum: dict[str, float] = {}
        chunks = np.array_split(rows, config.accumulate)
        for k, chunk in enumerate(chunks):
            batch = tuple(t.to(device) for t in pairs.batch(chunk))
            sync = (
                contextlib.nullcontext()
                if dist.world_size == 1 or k == len(chunks) - 1
                else net.no_sync()
            )
            with sync, autocast(config.precision, device):
                loss, terms = STEP_LOSS[config.loss](net, model, batch, clip_loss, config)
            scaler.scale(loss / len(chunks)).backward()
            for name, value in terms.items():
                terms_sum[name] = terms_sum.get(name, 0.0) + value / len(chunks)
        scaler.step(optimizer)
        scaler.update()
        lr = optimizer.param_groups[0]["lr"]
        scheduler.step()
        with torch.no_grad():  # CLIP's clamp: the temperature never exceeds 100
            model.logit_scale.clamp_(0, math.log(100))
        row = {"step": step + 1, "lr": lr, **{k: round(v, 6) for k, v in terms_sum.items()}}
        history.append(row)
        bar.set_postfix({k: f"{row[k]:.4f}" for k in ("total", "sc", "vc", "accuracy") if k in row})
        done = step + 1
        if (
            resume_path is not None
            and config.checkpoint_every
            and done % config.checkpoint_every == 0
            and done < config.steps
            and dist.main
        ):
            save_checkpoint(
                resume_path,
                fingerprint=config.fingerprint(),
                step=done,
                model=model.state_dict(),
                optimizer=optimizer.state_dict(),
                scheduler=scheduler.state_dict(),
                scaler=scaler.state_dict(),
                rng=_rng_state(),
                history=history,
            )
        if on_step is not None:
            on_step(done)
        if stop_after is not None and done >= stop_after:
            break
    model.eval()
    return history


def _autocast_dtype(device: str) -> str | None:
    if not device.startswith("cuda"):
        return None
    from vlstress.embedding.precision import autocast_dtype

    return autocast_dtype(device)


def distributed_from_env() -> Distributed:
    """The process's place in a torchrun launch (RANK / WORLD_SIZE), initialising the process
    group."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return Distributed()
    import torch.distributed as torch_dist

    if not torch_dist.is_initialized():
        torch_dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    return Distributed(rank=torch_dist.get_rank(), world_size=world)
