"""`vlstress model-card`: check one registry entry and write its model card.

The card names the architecture, the weights (hub tag, local checkpoint with its sha256,
or seeded random init) and the seed. Every step that uses the model reads the card
(`--model-card`), so all of them use exactly the same model, an unknown architecture
or tag fails once and early, and a checkpoint edited behind the workflow's back is caught.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from vlstress.argtypes import optional_str, seed_int


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model", required=True, help="model slug (key of `models` in params.yaml)"
    )
    parser.add_argument("--arch", required=True, help="open_clip architecture, e.g. ViT-B-32")
    parser.add_argument(
        "--pretrained",
        type=optional_str,
        default=None,
        help="hub tag, checkpoint path, or None (seeded random init)",
    )
    parser.add_argument("--seed", type=seed_int, default=0, help="seed of the random init")
    parser.add_argument(
        "--cache-dir", type=optional_str, default=None, help="where hub weights are cached"
    )
    parser.add_argument("--out", required=True, type=Path, help="card JSON to write")


def run(args: argparse.Namespace) -> None:
    from vlstress import provenance
    from vlstress.embedding import models
    from vlstress.io import write_json

    spec = models.ModelSpec(
        slug=args.model,
        arch=args.arch,
        pretrained=args.pretrained,
        seed=args.seed,
        cache_dir=args.cache_dir,
    )
    card = models.card(spec)
    card["provenance"] = provenance.build(
        "model-card", {"cache_dir": args.cache_dir}, seed=args.seed, model=card["model"]
    )
    write_json(args.out, card)
