"""`vlstress text-variants`: one RoCOCO-style caption set (generated, or the official file).

Output (official RoCOCO format): [{"image", "caption": [originals..., altered...]}] in
manifest order; sidecar `<out>.json` with provenance, counts and, for generated
sets, one record per altered caption (position, EI, original, replacement, concepts):
vlstress.suites.rococo_text.set_file.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from vlstress.argtypes import optional_str
    from vlstress.suites.rococo_text import set_file

    parser.add_argument("--manifest", required=True, type=Path)
    parser.add_argument(
        "--ei-scores",
        type=optional_str,
        default=None,
        help="from `vlstress ei-scores` (needed by the *-ei strategies)",
    )
    parser.add_argument(
        "--set",
        required=True,
        dest="set_name",
        help="set name, e.g. same_concept (official file <set>.json)",
    )
    set_file.add_generation_arguments(parser)
    set_file.add_source_arguments(parser)
    parser.add_argument("--out", required=True, type=Path)


def run(args: argparse.Namespace) -> None:
    from vlstress.io import sidecar, write_json
    from vlstress.suites.rococo_text import set_file

    built = set_file.build(
        args.manifest,
        set_name=args.set_name,
        source=args.source,
        kind=args.kind,
        seed=args.seed,
        words=args.words,
        strategy=args.strategy,
        strategy_seed=args.strategy_seed,
        pool=args.pool,
        official_dir=args.official_dir,
        raw=args.raw,
        nltk_data=args.nltk_data,
        ei_scores=args.ei_scores,
    )
    write_json(args.out, built.entries)
    write_json(sidecar(args.out), built.meta)
    print(f"{args.set_name}: {built.meta['n_images']} images -> {args.out}")
