"""The flags of a model step: which model (a card, or the registry entry itself) and how it runs
(device, batch sizes, threads, decoding workers, precision, image decoder), and what of them
provenance records."""

from __future__ import annotations

import argparse

from vlstress.argtypes import (
    optional_count,
    optional_int,
    optional_path,
    optional_str,
    positive_int,
    seed_int,
)
from vlstress.embedding.decoders import DECODERS
from vlstress.embedding.precision import PRECISIONS


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags that name one model: a model card (what the workflow passes), or the registry entry
    itself."""
    group = parser.add_argument_group(
        "model (a card from `vlstress model-card`, or --model and --arch)"
    )
    group.add_argument(
        "--model-card",
        type=optional_path,
        default=None,
        help="model card JSON of `vlstress model-card`",
    )
    group.add_argument("--model", default=None, help="model slug (key of `models` in params.yaml)")
    group.add_argument("--arch", default=None, help="open_clip architecture, e.g. ViT-B-32")
    group.add_argument(
        "--pretrained",
        type=optional_str,
        default=None,
        help=(
            "open_clip hub tag (e.g. openai), a local checkpoint path, or None for seeded random "
            "init"
        ),
    )
    group.add_argument("--seed", type=seed_int, default=0, help="seed of the random init")
    group.add_argument(
        "--cache-dir", default=None, type=optional_str, help="where hub weights are cached"
    )
    group.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N")
    group.add_argument(
        "--batch-size",
        type=positive_int,
        default=64,
        help="items per forward on the CPU (and on CUDA without --cuda-batch-size)",
    )
    group.add_argument(
        "--cuda-batch-size",
        type=optional_int,
        default=None,
        help=(
            "items per forward on CUDA (None = --batch-size): a GPU wants far larger batches "
            "than a CPU"
        ),
    )
    group.add_argument(
        "--threads",
        type=optional_int,
        default=None,
        help=(
            "torch CPU threads (fixed so that results do not depend on who runs the step; None = "
            "torch's default)"
        ),
    )
    group.add_argument(
        "--workers",
        type=optional_count,
        default=None,
        help=(
            "image decoding processes (0 = in the step's own process; None = the job's cores "
            "beside the model's --threads, on CUDA all of them, at most 8); "
            "embeddings do not depend on it"
        ),
    )
    group.add_argument(
        "--precision",
        choices=PRECISIONS,
        default="fp32",
        help="fp32, or amp (CUDA autocast: bfloat16 where supported, else float16; refused on CPU)",
    )
    group.add_argument(
        "--decoder",
        choices=DECODERS,
        default="pil",
        help=(
            "image files decoded by pil (Pillow, in the workers), or nvjpeg (JPEG batches on the "
            "GPU: other bytes than libjpeg's; refused on CPU; other files by Pillow)"
        ),
    )


def model_spec(args: argparse.Namespace):
    """The ModelSpec named by the flags of `add_model_arguments`. Every model step names its model
    before it loads it: a --decoder this device cannot run is refused here, before any model
    work."""
    from vlstress.embedding import decoders
    from vlstress.embedding.models import ModelSpec, resolve_device, spec_from_card
    from vlstress.errors import VlstressError

    decoders.check(getattr(args, "decoder", "pil"), resolve_device(args.device))
    if args.model_card is not None:
        if args.arch is not None or args.pretrained is not None:
            raise VlstressError("give either --model-card or --model/--arch/--pretrained, not both")
        return spec_from_card(args.model_card)
    if not args.model or not args.arch:
        raise VlstressError("name the model: --model-card CARD, or --model SLUG and --arch ARCH")
    return ModelSpec(
        slug=args.model,
        arch=args.arch,
        pretrained=args.pretrained,
        seed=args.seed,
        cache_dir=args.cache_dir,
    )


def batch_size(args: argparse.Namespace, device: str) -> int:
    """The batch size of a model step on the resolved `device` (--cuda-batch-size on CUDA, if
    given)."""
    from vlstress.errors import VlstressError

    if device.startswith("cuda") and args.cuda_batch_size is not None:
        if args.cuda_batch_size < 1:
            raise VlstressError(f"--cuda-batch-size must be >= 1, got {args.cuda_batch_size}")
        return args.cuda_batch_size
    return args.batch_size


def model_params(args: argparse.Namespace, spec, *, decoder: str | None = None) -> dict:
    """The run-time flags of a model step, recorded in provenance. `decoder`: what decoded the
    images of a step that decodes them itself, whatever --decoder says (the attack's sample and
    the fine-tuning pairs: Pillow); None = --decoder, the decoder of the image embedding path."""
    import torch

    from vlstress.embedding import decoders
    from vlstress.embedding.models import resolve_device
    from vlstress.embedding.precision import describe

    params = {
        "batch_size": batch_size(args, resolve_device(args.device)),  # what ran on this device
        "device": args.device,
        "cache_dir": spec.cache_dir,
        "threads": torch.get_num_threads(),  # what ran, after --threads
        # as asked (None = image_batches.default_workers): the bytes written do not depend on it,
        # and the resolved count would make the sidecars of identical runs differ between hosts
        "workers": args.workers,
        **describe(args.precision, resolve_device(args.device)),
        **decoders.describe(args.decoder, resolve_device(args.device)),
    }
    if decoder is not None:
        params.update(decoders.describe(decoder, resolve_device(args.device)))
    if args.model_card is not None:
        params["model_card"] = str(args.model_card)
    return params
