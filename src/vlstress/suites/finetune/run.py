"""The work of `vlstress finetune`: fine-tune a model of the registry with the CLIP loss + w_sc * SC
+ w_vc * VC.

`under_torchrun` runs the very command again under torchrun when it asks for several
data-parallel processes; `finetune` checks the settings and that no training image or caption is
in the test manifest, loads the training pairs (vlstress.suites.finetune.data) and the model,
and trains (vlstress.suites.finetune.trainer, resuming from the resume checkpoint when there is
one). `Finetuned` holds what the main process writes: the weights, the training log and the
checkpoint's sidecar.
"""

from __future__ import annotations

import argparse
import logging
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


def under_torchrun(processes: int, log: logging.Logger) -> bool:
    """With `processes` > 1 and not yet inside torchrun: run this very command under torchrun and
    wait (`log`: the command's logger)."""
    if processes <= 1 or "WORLD_SIZE" in os.environ:
        return False
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc_per_node={processes}",
        "-m",
        "vlstress",
        *sys.argv[1:],
    ]
    log.info("running %d data-parallel processes: %s", processes, " ".join(command))
    result = subprocess.run(command)
    if result.returncode != 0:
        from vlstress.errors import VlstressError

        raise VlstressError(
            f"torchrun with {processes} processes failed (exit {result.returncode}); see "
            "the messages above"
        )
    return True


@dataclass(frozen=True)
class Finetuned:
    """A finished fine-tuning, as the main process has it."""

    args: argparse.Namespace  # the flags of `vlstress finetune`
    spec: Any  # the base model's ModelSpec
    base: dict[str, Any]  # its description (provenance's model block)
    device: str
    config: Any  # the TrainConfig
    counts: dict[str, int]  # of the training pairs
    state: dict[str, Any]  # the fine-tuned weights (CPU tensors)
    history: list[dict[str, float]]  # one row per step
    resume: Path  # the resume checkpoint, no longer needed once the weights are written
    metadata: dict[str, str] | None = None  # of the safetensors file: a head's class names

    def log_csv(self) -> str:
        """The training log: one row per step (learning rate, loss terms, margins)."""
        columns = list(self.history[0])
        return (
            ",".join(columns)
            + "\n"
            + "".join(",".join(f"{row[c]:.6g}" for c in columns) + "\n" for row in self.history)
        )

    def data_settings(self) -> dict[str, Any]:
        """How the training pairs are made: the mixed images (SC/VC), or the prompts of the
        classes (FLYP; the standard head's initialisation)."""
        args = self.args
        if args.loss != "sc_vc":
            return {"templates": args.templates, "nproc": args.processes}
        return {"method": args.method, "lam": args.lam, "nproc": args.processes}

    def inputs(self) -> dict[str, str]:
        """sha256 of each input file (a class set: its manifest)."""
        from vlstress.io import sha256_file
        from vlstress.testsets.manifest import manifest_path

        args = self.args
        if args.loss != "sc_vc":
            files = [manifest_path(args.classes), args.test]
        else:
            files = [args.train, args.train_captions, args.test]
        return {str(p): sha256_file(p) for p in files}

    def sidecar(self) -> dict[str, Any]:
        """The checkpoint's sidecar: base model, settings, training counts, provenance."""
        from vlstress import provenance
        from vlstress.embedding.flags import model_params

        args, config = self.args, self.config
        return {
            "kind": "finetuned-checkpoint",
            "variant": args.variant,
            "base": self.base,
            "arch": self.spec.arch,
            "training": {**config.settings(), **self.data_settings(), **self.counts},
            "final": self.history[-1],
            "provenance": provenance.build(
                "finetune",
                {
                    # training images are decoded by Pillow (load_rgb), whatever --decoder says
                    **model_params(args, self.spec, decoder="pil"),
                    "variant": args.variant,
                    **config.settings(),
                    **self.data_settings(),
                },
                seed=args.train_seed,
                model=self.base,
                device=self.device,
                inputs=self.inputs(),
                packages=("peft",) if config.lora_rank else (),
            ),
        }


def finetune(args: argparse.Namespace) -> Finetuned | None:
    """Train as the flags say (vlstress.suites.finetune.flags); None in a data-parallel process
    other than the main one."""
    from vlstress.caption_data.manifest import load_manifest
    from vlstress.embedding import models
    from vlstress.embedding.flags import model_spec
    from vlstress.errors import VlstressError
    from vlstress.suites.finetune.data import (
        ClassPrompts,
        LabelledImages,
        TrainingPairs,
        load_classes,
        load_pairs,
    )
    from vlstress.suites.finetune.split import check_disjoint
    from vlstress.suites.finetune.trainer import (
        TrainConfig,
        distributed_from_env,
        train,
    )
    from vlstress.suites.rococo_image.variants import make_plan, parse_lam, perturbation

    config = TrainConfig(
        steps=args.steps,
        batch_size=args.train_batch_size,
        lr=args.lr,
        loss=args.loss,
        weight_decay=args.weight_decay,
        warmup=args.warmup,
        accumulate=args.accumulate,
        w_sc=args.w_sc,
        w_vc=args.w_vc,
        form=args.form,
        margin=args.margin,
        freeze=args.freeze,
        checkpoint_every=args.checkpoint_every,
        seed=args.train_seed,
        precision=args.precision,
        lora_rank=args.lora_rank,
        lora_alpha=args.lora_alpha,
        lora_dropout=args.lora_dropout,
        lora_tower=args.lora_tower,
        lora_modules=tuple(m.strip() for m in args.lora_modules.split(",") if m.strip()),
    )
    config.check()
    needed = {"sc_vc": ("train", "train_captions")}.get(args.loss, ("classes",))
    missing = [f"--{name.replace('_', '-')}" for name in needed if getattr(args, name) is None]
    if missing:
        raise VlstressError(f"--loss {args.loss} needs {' and '.join(missing)}")
    if args.loss == "sc_vc":
        if not perturbation(args.method).uses_partner:
            raise VlstressError(
                f"--method {args.method}: the visual contrastive loss needs a perturbation that "
                "mixes in a partner image (mix, patch)"
            )
        train_entries = load_manifest(args.train)["images"]
        check_disjoint(train_entries, load_manifest(args.test)["images"])
        paths, samples, counts = load_pairs(args.train, args.train_captions)
    else:
        from vlstress.suites.zeroshot.templates import resolve

        paths, labels, classes = load_classes(args.classes, args.test)
        templates, _ = resolve(args.templates)
        counts = {"images": len(paths), "classes": len(classes)}
        # FLYP's samples: each image with each template; the standard head: their mean per class
        counts["templates_per_image" if args.loss == "flyp" else "head_templates"] = len(templates)
    dist = distributed_from_env()
    spec = model_spec(args)
    device = models.resolve_device(args.device)
    if device.startswith("cuda") and dist.world_size > 1:
        device = f"cuda:{int(os.environ.get('LOCAL_RANK', '0'))}"
    model, preprocess, tokenizer = models.load(spec, device, threads=args.threads)
    base = models.describe(spec, model)
    pairs: TrainingPairs | ClassPrompts | LabelledImages
    if args.loss == "sc_vc":
        plan = make_plan(len(paths), args.method, parse_lam(args.lam), args.train_seed)
        pairs = TrainingPairs(paths, samples, plan, preprocess, tokenizer)
    elif args.loss == "flyp":
        pairs = ClassPrompts(paths, labels, classes, templates, preprocess, tokenizer)
    else:
        pairs = LabelledImages(paths, labels, preprocess)
    resume = args.resume or args.out.with_name(args.out.name + ".resume")
    adapted = None
    if config.lora_rank:
        import torch

        from vlstress.suites.finetune import lora

        torch.manual_seed(config.seed)  # the adapters' A matrices are drawn at random
        adapted = lora.add_adapters(
            model,
            rank=config.lora_rank,
            alpha=config.lora_alpha,
            dropout=config.lora_dropout,
            tower=config.lora_tower,
            modules=config.lora_modules,
        )
        log.info(
            "LoRA rank %d on %s: %d trainable parameters",
            config.lora_rank,
            ", ".join(config.lora_modules),
            lora.trainable(model),
        )
    if args.loss == "standard":  # after the adapters: peft would freeze the head
        zero_shot_head(model, tokenizer, classes, templates, device, args.precision)
    history = train(model, pairs, config, device=device, resume_path=resume, dist=dist)
    if not dist.main:
        return None
    if adapted is not None:
        model = lora.merge(adapted)
    state = {
        name: tensor.detach().cpu().contiguous().clone()
        for name, tensor in model.state_dict().items()
    }
    from vlstress.embedding import heads

    metadata = heads.metadata(model)
    return Finetuned(args, spec, base, device, config, counts, state, history, resume, metadata)


def zero_shot_head(model, tokenizer, classes, templates, device: str, precision: str) -> None:
    """Attach standard fine-tuning's head: the zero-shot classifier of the training classes times
    the model's logit scale (WiSE-FT's initialisation; no bias), so before training its logits are
    the zero-shot logits."""
    from vlstress.embedding import heads
    from vlstress.suites.zeroshot.classifier import build, model_logit_scale

    rows = build(model, tokenizer, classes, templates, device=device, precision=precision)
    heads.attach(model, rows * model_logit_scale(model)["logit_scale"], classes)


def log_summary(finetuned: Finetuned, log: logging.Logger) -> None:
    """One line: steps, first and last loss, last margins, where the weights went."""
    history, args = finetuned.history, finetuned.args
    last = history[-1]
    margins = (
        f", margins SC {last['margin_sc']:.4f} VC {last['margin_vc']:.4f}"
        if "margin_sc" in last
        else ""
    )
    log.info(
        "%s: %d steps, loss %.4f -> %.4f%s -> %s",
        args.variant,
        len(history),
        history[0]["total"],
        last["total"],
        margins,
        args.out,
    )
