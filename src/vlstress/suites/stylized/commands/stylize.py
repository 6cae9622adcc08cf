"""`vlstress stylize`: an AdaIN-stylized copy of a classification test set (Stylized-ImageNet's
recipe on any test set). See vlstress.suites.stylized.adain (networks, weights and pins) and
.stylize (the copy)."""

from __future__ import annotations

import argparse
from pathlib import Path

from vlstress.argtypes import optional_str, seed_int


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--manifest", required=True, type=Path, help="the clean test set's folder")
    parser.add_argument("--styles", required=True, help="demo | a folder of style images")
    parser.add_argument(
        "--weights",
        type=optional_str,
        default=None,
        help="None: seeded random init; a URL folder or local folder of vgg_normalised.pth and "
        "decoder.pth (pytorch-AdaIN's release)",
    )
    parser.add_argument("--pins", required=True, type=Path, help="sha256 pin file of the weights")
    parser.add_argument(
        "--alpha", required=True, type=float, help="content-style trade-off, [0, 1]"
    )
    parser.add_argument("--seed", required=True, type=seed_int, help="style choice and init seed")
    parser.add_argument("--size", type=int, default=224, help="side of the stylized images")
    parser.add_argument("--device", default="auto", help="auto | cpu | cuda")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    parser.add_argument("--batch-size", type=int, default=8, help="images per forward")
    parser.add_argument("--cache-dir", type=Path, default=Path("data/downloads"))
    parser.add_argument("--out", required=True, type=Path, help="folder to write")


def run(args: argparse.Namespace) -> None:
    from vlstress import provenance
    from vlstress.embedding import models
    from vlstress.errors import VlstressError
    from vlstress.io import sha256_file
    from vlstress.suites.stylized import adain, stylize
    from vlstress.suites.stylized.styles import style_paths
    from vlstress.testsets.manifest import load, manifest_path

    if not 0.0 <= args.alpha <= 1.0:  # before any image or weight is read
        raise VlstressError(f"AdaIN alpha must be in [0, 1], got {args.alpha}")
    clean = load(args.manifest)
    styles = style_paths(args.styles)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    device = models.resolve_device(args.device)
    stylizer = adain.load(
        args.weights, pins=args.pins, cache_dir=args.cache_dir, seed=args.seed, device=device
    )
    block = provenance.build(
        "stylize",
        {"styles": args.styles, "alpha": args.alpha, "size": args.size, "weights": args.weights},
        seed=args.seed,
        model={"arch": "AdaIN (VGG-19 relu4_1 + decoder)", **stylizer.described},
        device=device,
        inputs={str(args.manifest): sha256_file(manifest_path(args.manifest))},
    )
    stylize.generate(
        clean,
        stylizer,
        styles,
        alpha=args.alpha,
        seed=args.seed,
        size=args.size,
        out_dir=args.out,
        batch_size=args.batch_size,
        provenance=block,
    )
