"""`vlstress text-variants`: one RoCOCO-style caption set (generated, or the official file).

Output (official RoCOCO format): [{"image", "caption": [originals..., altered...]}] in
manifest order; sidecar `<out>.json` with provenance, counts and, for generated
sets, one record per altered caption (position, EI, original, replacement, concepts).
"""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from vlstress.argtypes import optional_str, seed_int
    from vlstress.suites.rococo_text import variants

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
    parser.add_argument(
        "--kind",
        default=None,
        type=optional_str,
        help=f"one of {', '.join(variants.KINDS)} (default from the set name)",
    )
    parser.add_argument(
        "--seed", type=seed_int, default=0, help="seed of this set's replacement choices"
    )
    parser.add_argument(
        "--words",
        type=optional_str,
        default=None,
        help="comma-separated fixed word list (danger), or None",
    )
    parser.add_argument(
        "--strategy",
        default="lowest-ei",
        choices=sorted(variants.STRATEGIES),
        help="which candidate noun is replaced",
    )
    parser.add_argument(
        "--strategy-seed",
        type=seed_int,
        default=0,
        help="seed of the random strategy (shared by all sets)",
    )
    parser.add_argument(
        "--pool",
        default="caption-first",
        choices=sorted(variants.POOL_MODES),
        help="where same-/diff-concept words come from",
    )
    parser.add_argument("--source", default="generated", choices=["generated", "official"])
    parser.add_argument(
        "--official-dir",
        type=optional_str,
        default=None,
        help="folder of the official <set>.json files (None = <raw>/rococo)",
    )
    parser.add_argument(
        "--raw",
        type=optional_str,
        default=None,
        help="the dataset's raw folder (holds rococo/ for karpathy)",
    )
    parser.add_argument(
        "--nltk-data",
        default="data/nltk_data",
        help="nltk data folder holding WordNet (`vlstress nlp-data`)",
    )
    parser.add_argument("--out", required=True, type=Path)


def run(args: argparse.Namespace) -> None:
    from vlstress import provenance
    from vlstress.caption_data.manifest import load_manifest
    from vlstress.errors import VlstressError
    from vlstress.io import sha256_file, sidecar, write_json
    from vlstress.suites.rococo_text import variants

    manifest = load_manifest(args.manifest)
    entries = manifest["images"]
    inputs = {str(args.manifest): sha256_file(args.manifest)}
    params = {
        "set": args.set_name,
        "source": args.source,
        "kind": args.kind,
        "seed": args.seed,
        "words": args.words,
        "strategy": args.strategy,
        "strategy_seed": args.strategy_seed,
        "pool": args.pool,
        "official_dir": args.official_dir,
    }
    if args.source == "official":
        path = variants.official_path(args.official_dir, args.raw, args.set_name)
        if path is None:
            where = " or ".join(
                str(p)
                for p in filter(
                    None, [args.official_dir, args.raw and str(Path(args.raw) / "rococo")]
                )
            )
            raise VlstressError(
                f"official set {args.set_name!r}: {args.set_name}.json not found in "
                f"{where or '(no folder given)'}; set text_variants.official_dir (e.g. "
                "../shared/data/rococo) or use the karpathy dataset kind, whose download fetches "
                "them"
            )
        out_entries, matched = variants.load_official(path, entries)
        if not matched:
            raise VlstressError(
                f"official set {path}: none of the {len(entries)} manifest images is in it "
                "(matched by COCO image id)"
            )
        inputs[str(path)] = sha256_file(path)
        counts = {
            "images_with_fewer_altered": variants.fewer_altered(out_entries, entries)
        }  # the documented 6 + 5 exception
        meta = {
            "n_images": matched,
            "n_manifest_images": len(entries),
            "official_file": str(path),
            "records": None,
            "counts": counts,
        }
    else:
        from vlstress.suites.rococo_text.concepts import (
            ConceptIndex,
            vocabulary,
            vocabulary_nouns,
        )
        from vlstress.suites.rococo_text.nlp import word_classes

        kind = args.kind or variants.default_kind(args.set_name)
        if kind is None:
            raise VlstressError(f"set {args.set_name!r}: give --kind ({', '.join(variants.KINDS)})")
        variants.set_kind(kind, args.set_name)  # an unknown kind fails before WordNet is loaded
        params["kind"] = kind
        wc = word_classes(args.nltk_data)
        ci = ConceptIndex(wc.wn)
        ei = None
        if args.strategy.endswith("-ei"):
            if not args.ei_scores:
                raise VlstressError(
                    f"strategy {args.strategy!r} needs --ei-scores (from `vlstress ei-scores`)"
                )
            ei = variants.load_ei_scores(args.ei_scores)
            inputs[str(args.ei_scores)] = sha256_file(args.ei_scores)
        words = (
            [w.strip().lower() for w in args.words.split(",") if w.strip()] if args.words else None
        )
        vocab = list(vocabulary())
        pools = (
            variants.Pools(ci, variants.caption_nouns(entries, wc), vocabulary_nouns(), args.pool)
            if variants.needs_pools(kind, args.set_name, words)
            else None
        )
        ctx = variants.Context(
            word_classes=wc, concepts=ci, pools=pools, vocabulary=vocab, words=words
        )
        positions = variants.choose_positions(entries, ei, wc, args.strategy, args.strategy_seed)
        result = variants.generate_set(
            entries, positions, set_name=args.set_name, kind=kind, seed=args.seed, ctx=ctx
        )
        out_entries = result.entries
        meta = {
            "n_images": len(out_entries),
            "n_manifest_images": len(entries),
            "official_file": None,
            "records": result.records,
            "counts": result.counts,
        }
    write_json(args.out, out_entries)
    write_json(
        sidecar(args.out),
        {
            "kind": "text-variants",
            "set": args.set_name,
            **meta,
            "provenance": provenance.build("text-variants", params, seed=args.seed, inputs=inputs),
        },
    )
    print(f"{args.set_name}: {meta['n_images']} images -> {args.out}")
