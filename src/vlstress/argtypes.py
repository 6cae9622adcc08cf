"""Flag types and flag groups shared by subcommands and dataset kinds. DVC and Snakemake render YAML null as `None`."""

from __future__ import annotations

import argparse

from vlstress.embedding.precision import PRECISIONS

NULLS = {"none", "null", "~", ""}


def optional_str(value: str) -> str | None:
    return None if value.strip().lower() in NULLS else value


def optional_int(value: str) -> int | None:
    if value.strip().lower() in NULLS:
        return None
    return positive_int(value)


def positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value!r}") from None
    if number <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value!r}")
    return number


def _number(value: str, cast, ok, expected: str):
    try:
        number = cast(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {value!r}") from None
    if not ok(number):
        raise argparse.ArgumentTypeError(f"expected {expected}, got {value!r}")
    return number


def non_negative_int(value: str) -> int:
    return _number(value, int, lambda n: n >= 0, "an integer >= 0")


def non_negative_float(value: str) -> float:
    return _number(value, float, lambda n: n >= 0, "a number >= 0")


def positive_float(value: str) -> float:
    return _number(value, float, lambda n: n > 0, "a number > 0")


def fraction(value: str) -> float:
    """A number strictly between 0 and 1 (a share of a set)."""
    return _number(value, float, lambda n: 0 < n < 1, "a number in (0, 1)")


def optional_count(value: str) -> int | None:
    """None, or an integer >= 0 (0 is meaningful, e.g. `--workers 0` = no worker processes)."""
    return None if value.strip().lower() in NULLS else _number(value, int, lambda n: n >= 0, "an integer >= 0 or None")


def optional_float(value: str) -> float | None:
    return None if value.strip().lower() in NULLS else _number(value, float, lambda n: True, "a number or None")


def int_list(value: str) -> list[int]:
    """`1,5,10` -> [1, 5, 10]: lists travel as one flag (DVC cannot interpolate YAML lists)."""
    try:
        items = [positive_int(part) for part in value.split(",")]
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected comma-separated positive integers, got {value!r}") from None
    return items


def seed_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer seed, got {value!r}") from None
    if number < 0:
        raise argparse.ArgumentTypeError(f"seed must be >= 0, got {value!r}")
    return number


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags that name one model: a model card (what the workflow passes), or the registry entry itself."""
    group = parser.add_argument_group("model (a card from `vlstress model-card`, or --model and --arch)")
    group.add_argument("--model-card", type=optional_path, default=None, help="model card JSON of `vlstress model-card`")
    group.add_argument("--model", default=None, help="model slug (key of `models` in params.yaml)")
    group.add_argument("--arch", default=None, help="open_clip architecture, e.g. ViT-B-32")
    group.add_argument(
        "--pretrained",
        type=optional_str,
        default=None,
        help="open_clip hub tag (e.g. openai), a local checkpoint path, or None for seeded random init",
    )
    group.add_argument("--seed", type=seed_int, default=0, help="seed of the random init")
    group.add_argument("--cache-dir", default=None, type=optional_str, help="where hub weights are cached")
    group.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N")
    group.add_argument("--batch-size", type=positive_int, default=64, help="items per forward on the CPU (and on CUDA without --cuda-batch-size)")
    group.add_argument(
        "--cuda-batch-size", type=optional_int, default=None,
        help="items per forward on CUDA (None = --batch-size): a GPU wants far larger batches than a CPU",
    )  # fmt: skip
    group.add_argument(
        "--threads", type=optional_int, default=None,
        help="torch CPU threads (fixed so that results do not depend on who runs the step; None = torch's default)",
    )  # fmt: skip
    group.add_argument(
        "--workers", type=optional_count, default=None,
        help="image decoding processes (0 = in the step's own process; None = the job's cores beside the "
        "model's --threads, on CUDA all of them, at most 8); "
        "embeddings do not depend on it",
    )  # fmt: skip
    group.add_argument(
        "--precision", choices=PRECISIONS, default="fp32",
        help="fp32, or amp (CUDA autocast: bfloat16 where supported, else float16; refused on CPU)",
    )  # fmt: skip


def optional_path(value: str):
    from pathlib import Path

    text = optional_str(value)
    return None if text is None else Path(text)


def model_spec(args: argparse.Namespace):
    """The ModelSpec named by the flags of `add_model_arguments`."""
    from vlstress.errors import VlstressError
    from vlstress.embedding.models import ModelSpec, spec_from_card

    if args.model_card is not None:
        if args.arch is not None or args.pretrained is not None:
            raise VlstressError("give either --model-card or --model/--arch/--pretrained, not both")
        return spec_from_card(args.model_card)
    if not args.model or not args.arch:
        raise VlstressError("name the model: --model-card CARD, or --model SLUG and --arch ARCH")
    return ModelSpec(slug=args.model, arch=args.arch, pretrained=args.pretrained, seed=args.seed, cache_dir=args.cache_dir)


def batch_size(args: argparse.Namespace, device: str) -> int:
    """The batch size of a model step on the resolved `device` (--cuda-batch-size on CUDA, if given)."""
    from vlstress.errors import VlstressError

    if device.startswith("cuda") and args.cuda_batch_size is not None:
        if args.cuda_batch_size < 1:
            raise VlstressError(f"--cuda-batch-size must be >= 1, got {args.cuda_batch_size}")
        return args.cuda_batch_size
    return args.batch_size


def model_params(args: argparse.Namespace, spec) -> dict:
    """The run-time flags of a model step, recorded in provenance."""
    import torch

    from vlstress.embedding.models import resolve_device
    from vlstress.embedding.precision import describe

    params = {
        "batch_size": batch_size(args, resolve_device(args.device)),  # what ran on this device
        "device": args.device,
        "cache_dir": spec.cache_dir,
        "threads": torch.get_num_threads(),  # what ran, after --threads
        # as asked (None = image_batches.default_workers): the bytes written do not depend on it, and the
        # resolved count would make the sidecars of identical runs differ between hosts
        "workers": args.workers,
        **describe(args.precision, resolve_device(args.device)),
    }
    if args.model_card is not None:
        params["model_card"] = str(args.model_card)
    return params
