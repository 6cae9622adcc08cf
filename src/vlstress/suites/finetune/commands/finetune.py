"""`vlstress finetune`: fine-tune a model of the registry with the CLIP loss + w_sc * SC +
w_vc * VC.

Training pairs (vlstress.finetune.data): the training manifest's images and captions, the altered
caption of each caption (a caption set made from the *training* captions by `vlstress
text-variants`), and each image mixed with a partner training image (seeded plan, --method,
--lam). Before training, the step fails if any training image or caption is in the test manifest.

Writes the fine-tuned weights as a safetensors checkpoint (`--out`, loadable by open_clip as
`pretrained: <path>`, so a model entry with that path evaluates it like any other model), its
sidecar (`<out>.json`: base model, settings, training counts, provenance) and the training log
(`--out-log`, one row per step: learning rate, loss terms, margins; a DVC plot). A killed run
started again with the same command resumes from its last checkpoint (`--resume`, every
--checkpoint-every steps) and ends at the same weights as an uninterrupted run.

With --processes N > 1 the step runs itself under torchrun (N data-parallel processes: N GPUs on
CUDA, gloo processes on CPU); rank 0 writes the outputs.
"""

from __future__ import annotations

import argparse
import logging
import os
import subprocess
import sys
from pathlib import Path

from vlstress.argtypes import (
    non_negative_float,
    non_negative_int,
    optional_str,
    positive_int,
    seed_int,
)
from vlstress.embedding.flags import add_model_arguments, model_params, model_spec

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from vlstress.suites.finetune.losses import FORMS

    parser.add_argument(
        "--train", required=True, type=Path, help="training manifest (`vlstress train-split`)"
    )
    parser.add_argument(
        "--train-captions",
        required=True,
        type=Path,
        help="caption set of the training captions (`vlstress text-variants`)",
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


def _under_torchrun(args: argparse.Namespace) -> bool:
    """With --processes > 1 and not yet inside torchrun: run this very command under torchrun and
    wait."""
    if args.processes <= 1 or "WORLD_SIZE" in os.environ:
        return False
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc_per_node={args.processes}",
        "-m",
        "vlstress",
        *sys.argv[1:],
    ]
    log.info("running %d data-parallel processes: %s", args.processes, " ".join(command))
    result = subprocess.run(command)
    if result.returncode != 0:
        from vlstress.errors import VlstressError

        raise VlstressError(
            f"torchrun with {args.processes} processes failed (exit {result.returncode}); see "
            "the messages above"
        )
    return True


def run(args: argparse.Namespace) -> None:
    if _under_torchrun(args):
        return
    from safetensors.torch import save_file

    from vlstress import provenance
    from vlstress.caption_data.manifest import load_manifest
    from vlstress.embedding import models
    from vlstress.errors import VlstressError
    from vlstress.io import atomic_path, sha256_file, sidecar, write_json, write_text
    from vlstress.suites.finetune.data import TrainingPairs, load_pairs
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
    )
    config.check()
    if not perturbation(args.method).uses_partner:
        raise VlstressError(
            f"--method {args.method}: the visual contrastive loss needs a perturbation that "
            "mixes in a partner image (mix, patch)"
        )
    train_entries = load_manifest(args.train)["images"]
    check_disjoint(train_entries, load_manifest(args.test)["images"])
    paths, samples, counts = load_pairs(args.train, args.train_captions)
    dist = distributed_from_env()
    spec = model_spec(args)
    device = models.resolve_device(args.device)
    if device.startswith("cuda") and dist.world_size > 1:
        device = f"cuda:{int(os.environ.get('LOCAL_RANK', '0'))}"
    model, preprocess, tokenizer = models.load(spec, device, threads=args.threads)
    base = models.describe(spec, model)
    plan = make_plan(len(paths), args.method, parse_lam(args.lam), args.train_seed)
    pairs = TrainingPairs(paths, samples, plan, preprocess, tokenizer)
    resume = args.resume or args.out.with_name(args.out.name + ".resume")
    history = train(model, pairs, config, device=device, resume_path=resume, dist=dist)
    if not dist.main:
        return
    state = {
        name: tensor.detach().cpu().contiguous().clone()
        for name, tensor in model.state_dict().items()
    }
    with atomic_path(args.out) as tmp:
        save_file(state, str(tmp))
    columns = list(history[0])
    write_text(
        args.out_log,
        ",".join(columns)
        + "\n"
        + "".join(",".join(f"{row[c]:.6g}" for c in columns) + "\n" for row in history),
    )
    write_json(
        sidecar(args.out),
        {
            "kind": "finetuned-checkpoint",
            "variant": args.variant,
            "base": base,
            "arch": spec.arch,
            "training": {
                **config.__dict__,
                "method": args.method,
                "lam": args.lam,
                "nproc": args.processes,
                **counts,
            },
            "final": history[-1],
            "provenance": provenance.build(
                "finetune",
                {
                    **model_params(args, spec),
                    "variant": args.variant,
                    **config.__dict__,
                    "method": args.method,
                    "lam": args.lam,
                    "nproc": args.processes,
                },
                seed=args.train_seed,
                model=base,
                device=device,
                inputs={
                    str(p): sha256_file(p) for p in (args.train, args.train_captions, args.test)
                },
            ),
        },
    )
    # the finished weights are the result: the resume state is no longer needed
    resume.unlink(missing_ok=True)
    last = history[-1]
    log.info(
        "%s: %d steps, loss %.4f -> %.4f, margins SC %.4f VC %.4f -> %s",
        args.variant,
        len(history),
        history[0]["total"],
        last["total"],
        last["margin_sc"],
        last["margin_vc"],
        args.out,
    )
