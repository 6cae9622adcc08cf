"""`vlstress pool`: the papers' model pool as a params fragment (a `models:` block), from the
libraries' own registries, each entry with its attributes (vlstress.pool; docs/models.md).

    vlstress pool --out params.pool.yaml                         # CLIP, testbed timm, LLaVA
    vlstress pool --kind open_clip --family ViT --max-params 500 --data LAION --out p.yaml
    vlstress pool --kind finetuned --params params.yaml --out p.yaml   # the fine-tuned entries
"""

from __future__ import annotations

import argparse
from pathlib import Path

from vlstress.argtypes import positive_int

KINDS = ("open_clip", "timm", "llava", "finetuned")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, required=True, help="params fragment to write")
    parser.add_argument(
        "--kind",
        action="append",
        choices=KINDS,
        help="keep only this kind (repeatable; default open_clip, timm and llava)",
    )
    parser.add_argument("--family", action="append", default=[], help="e.g. ViT (repeatable)")
    parser.add_argument(
        "--max-params", type=float, default=None, help="largest image + text tower, millions"
    )
    parser.add_argument(
        "--resolution", action="append", type=positive_int, default=[], help="input side"
    )
    parser.add_argument(
        "--data", action="append", default=[], help="a part of the pretraining data's name"
    )
    parser.add_argument(
        "--timm",
        choices=("testbed", "all"),
        default="testbed",
        help="timm classifiers: the testbed's models timm has (default) or every ImageNet-1k one",
    )
    parser.add_argument(
        "--params",
        action="append",
        type=Path,
        help="params file(s) whose fine-tuned checkpoint entries `--kind finetuned` takes",
    )
    parser.add_argument(
        "--no-count",
        action="store_true",
        help="no parameter counts (faster; --max-params then keeps nothing)",
    )


def run(args: argparse.Namespace) -> None:
    import sys

    from vlstress.io import write_text
    from vlstress.pool import build, render
    from vlstress.pool.filters import Filters

    models: dict = {}
    if args.params:
        from vlstress.params import load

        models = load(args.params).get("models") or {}
    kinds = tuple(args.kind or KINDS[:3])
    filters = Filters(
        kinds,
        tuple(args.family),
        args.max_params,
        tuple(args.resolution),
        tuple(args.data),
    )
    found = build.pool(filters, timm_all=args.timm == "all", models=models, count=not args.no_count)
    flags = " ".join(sys.argv[2:]) if sys.argv[1:2] == ["pool"] else ""
    write_text(args.out, render.text(found, f" {flags}" if flags else "", str(args.out)))
    print(f"wrote {args.out}: {len(found)} models")
