"""The flags of `vlstress finetune`: the training data and test manifest, the model
(vlstress.embedding.flags), the training settings (`finetune:` in params.yaml) and the outputs."""

from __future__ import annotations

import argparse
from pathlib import Path

from vlstress.argtypes import (
    non_negative_float,
    non_negative_int,
    optional_str,
    positive_int,
    seed_int,
)
from vlstress.embedding.flags import add_model_arguments


def add_finetune_arguments(parser: argparse.ArgumentParser) -> None:
    """Every flag of `vlstress finetune`."""
    from vlstress.suites.finetune.losses import FORMS
    from vlstress.suites.finetune.trainer import LOSSES

    parser.add_argument(
        "--loss",
        choices=list(LOSSES),
        default="sc_vc",
        help="sc_vc: CLIP + SC + VC on --train and --train-captions; flyp: the CLIP loss on the "
        "images of --classes and prompts of their classes (--templates); standard: cross-entropy "
        "through a head initialised from the zero-shot classifier of those classes",
    )
    parser.add_argument(
        "--train", type=Path, default=None, help="sc_vc: training manifest (`vlstress train-split`)"
    )
    parser.add_argument(
        "--train-captions",
        type=Path,
        default=None,
        help="sc_vc: caption set of the training captions (`vlstress text-variants`)",
    )
    parser.add_argument(
        "--classes",
        type=Path,
        default=None,
        help="flyp, standard: labelled training images, a class-set folder of `vlstress testset`",
    )
    parser.add_argument(
        "--templates",
        default="simple",
        help="flyp, standard: prompt templates of the classes (openai, simple, single or a file)",
    )
    parser.add_argument(
        "--test",
        required=True,
        type=Path,
        help="the test manifest: none of its images or captions may be trained on",
    )
    add_model_arguments(parser)
    group = parser.add_argument_group("training (finetune: in params.yaml)")
    group.add_argument(
        "--variant", required=True, help="name of this fine-tuning (finetune.variants key)"
    )
    group.add_argument(
        "--w-sc",
        type=non_negative_float,
        default=1.0,
        help="weight of the semantic contrastive loss",
    )
    group.add_argument(
        "--w-vc", type=non_negative_float, default=1.0, help="weight of the visual contrastive loss"
    )
    group.add_argument(
        "--form",
        choices=list(FORMS),
        default="hard-negative",
        help="form of SC and VC (vlstress.finetune.losses)",
    )
    group.add_argument(
        "--margin", type=non_negative_float, default=0.2, help="margin of the hinge form"
    )
    group.add_argument("--steps", type=positive_int, required=True, help="optimizer steps")
    group.add_argument(
        "--train-batch-size",
        type=positive_int,
        default=32,
        help="image-caption pairs per optimizer step",
    )
    group.add_argument(
        "--lr", type=non_negative_float, default=1e-5, help="peak learning rate (AdamW)"
    )
    group.add_argument("--weight-decay", type=non_negative_float, default=0.1)
    group.add_argument(
        "--warmup",
        type=non_negative_int,
        default=0,
        help="linear warm-up steps before the cosine decay",
    )
    group.add_argument(
        "--accumulate", type=positive_int, default=1, help="micro-batches per optimizer step"
    )
    group.add_argument(
        "--freeze",
        type=optional_str,
        default=None,
        help="image or text: keep that tower fixed (None = train both)",
    )
    group.add_argument(
        "--checkpoint-every",
        type=non_negative_int,
        default=0,
        help="steps between resume checkpoints (0 = none)",
    )
    group.add_argument(
        "--train-seed", type=seed_int, default=0, help="seed of the data order and the mixing plan"
    )
    group.add_argument(
        "--method",
        default="mix",
        help="how a mixed image is made: an image perturbation (mix, patch)",
    )
    group.add_argument(
        "--lam", default="0.5", help="share of the original image in the mixed image"
    )
    lora = parser.add_argument_group("LoRA (finetune.lora; a variant's rank)")
    lora.add_argument(
        "--lora-rank",
        type=non_negative_int,
        default=0,
        help="train LoRA adapters of this rank instead of the weights (0 = full fine-tuning)",
    )
    lora.add_argument(
        "--lora-alpha", type=positive_int, default=16, help="the update is scaled alpha / rank"
    )
    lora.add_argument("--lora-dropout", type=non_negative_float, default=0.0)
    lora.add_argument("--lora-tower", choices=["image", "text"], default="image")
    lora.add_argument(
        "--lora-modules",
        default="mlp.c_fc,mlp.c_proj",
        help="comma-separated Linear layers of the tower (last parts of their module names)",
    )
    group.add_argument(
        "--processes",
        type=positive_int,
        default=1,
        help="data-parallel processes (torchrun; GPUs on CUDA)",
    )
    group.add_argument(
        "--resume", type=Path, default=None, help="resume checkpoint (default: <out>.resume)"
    )
    parser.add_argument(
        "--out",
        required=True,
        type=Path,
        help="fine-tuned weights (.safetensors; sidecar <out>.json)",
    )
    parser.add_argument(
        "--out-log", required=True, type=Path, help="training log CSV (one row per step)"
    )
