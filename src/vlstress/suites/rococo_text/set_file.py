"""One caption-set file of `vlstress text-variants` (generated, or the official file matched to
the manifest) and its sidecar.

The set (official RoCOCO format): [{"image", "caption": [originals..., altered...]}] in
manifest order. The sidecar: provenance, counts and, for generated sets, one record per
altered caption (position, EI, original, replacement, concepts). Generation:
vlstress.suites.rococo_text.variants.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def add_generation_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of a generated set: its kind, seed and word list, and how the replaced word is
    chosen and where its replacements come from."""
    from vlstress.argtypes import optional_names, optional_str, seed_int
    from vlstress.suites.rococo_text import variants

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
        type=optional_names,
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


def add_source_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags that say whether the set is generated or the official file, where the official
    files are, and where WordNet is."""
    from vlstress.argtypes import optional_str

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


@dataclass(frozen=True)
class SetFile:
    """The set (`entries`, official format) and its sidecar (`meta`, with provenance)."""

    entries: list[dict[str, Any]]
    meta: dict[str, Any]


def official_set(
    set_name: str,
    official_dir: str | None,
    raw: str | None,
    entries: list[dict[str, Any]],
    inputs: dict[str, str],
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(set, sidecar fields) of the official set `set_name`, matched to the manifest `entries` by
    COCO image id; the file read is added to `inputs` (path -> sha256)."""
    from vlstress.errors import VlstressError
    from vlstress.io import sha256_file
    from vlstress.suites.rococo_text import variants

    path = variants.official_path(official_dir, raw, set_name)
    if path is None:
        where = " or ".join(
            str(p) for p in filter(None, [official_dir, raw and str(Path(raw) / "rococo")])
        )
        raise VlstressError(
            f"official set {set_name!r}: {set_name}.json not found in "
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
    return out_entries, meta


def generated_set(
    entries: list[dict[str, Any]],
    *,
    set_name: str,
    kind: str | None,
    seed: int,
    words: list[str] | None,
    strategy: str,
    strategy_seed: int,
    pool: str,
    nltk_data: str,
    ei_scores: str | None,
    inputs: dict[str, str],
) -> tuple[list[dict[str, Any]], dict[str, Any], str]:
    """(set, sidecar fields, its kind: `kind` or the set name's default) of a generated set of
    the manifest `entries`; the EI file, when the strategy reads one, is added to `inputs`."""
    from vlstress.errors import VlstressError
    from vlstress.io import sha256_file
    from vlstress.suites.rococo_text import variants
    from vlstress.suites.rococo_text.concepts import (
        ConceptIndex,
        vocabulary,
        vocabulary_nouns,
    )
    from vlstress.suites.rococo_text.nlp import word_classes

    kind = kind or variants.default_kind(set_name)
    if kind is None:
        raise VlstressError(f"set {set_name!r}: give --kind ({', '.join(variants.KINDS)})")
    variants.set_kind(kind, set_name)  # an unknown kind fails before WordNet is loaded
    wc = word_classes(nltk_data)
    ci = ConceptIndex(wc.wn)
    ei = None
    if strategy.endswith("-ei"):
        if not ei_scores:
            raise VlstressError(
                f"strategy {strategy!r} needs --ei-scores (from `vlstress ei-scores`)"
            )
        ei = variants.load_ei_scores(ei_scores)
        inputs[str(ei_scores)] = sha256_file(ei_scores)
    word_list = [w.lower() for w in words] if words else None
    vocab = list(vocabulary())
    pools = (
        variants.Pools(ci, variants.caption_nouns(entries, wc), vocabulary_nouns(), pool)
        if variants.needs_pools(kind, set_name, word_list)
        else None
    )
    ctx = variants.Context(
        word_classes=wc, concepts=ci, pools=pools, vocabulary=vocab, words=word_list
    )
    positions = variants.choose_positions(entries, ei, wc, strategy, strategy_seed)
    result = variants.generate_set(
        entries, positions, set_name=set_name, kind=kind, seed=seed, ctx=ctx
    )
    meta = {
        "n_images": len(result.entries),
        "n_manifest_images": len(entries),
        "official_file": None,
        "records": result.records,
        "counts": result.counts,
    }
    return result.entries, meta, kind


def build(
    manifest_path: Path,
    *,
    set_name: str,
    source: str,
    kind: str | None,
    seed: int,
    words: list[str] | None,
    strategy: str,
    strategy_seed: int,
    pool: str,
    official_dir: str | None,
    raw: str | None,
    nltk_data: str,
    ei_scores: str | None,
) -> SetFile:
    """The caption set `set_name` of the manifest: the official file (`source` official) or
    generated, with its sidecar."""
    from vlstress import provenance
    from vlstress.caption_data.manifest import load_manifest
    from vlstress.io import sha256_file

    manifest = load_manifest(manifest_path)
    entries = manifest["images"]
    inputs = {str(manifest_path): sha256_file(manifest_path)}
    params = {
        "set": set_name,
        "source": source,
        "kind": kind,
        "seed": seed,
        "words": words,
        "strategy": strategy,
        "strategy_seed": strategy_seed,
        "pool": pool,
        "official_dir": official_dir,
    }
    if source == "official":
        out_entries, meta = official_set(set_name, official_dir, raw, entries, inputs)
    else:
        out_entries, meta, params["kind"] = generated_set(
            entries,
            set_name=set_name,
            kind=kind,
            seed=seed,
            words=words,
            strategy=strategy,
            strategy_seed=strategy_seed,
            pool=pool,
            nltk_data=nltk_data,
            ei_scores=ei_scores,
            inputs=inputs,
        )
    return SetFile(
        out_entries,
        {
            "kind": "text-variants",
            "set": set_name,
            **meta,
            "provenance": provenance.build("text-variants", params, seed=seed, inputs=inputs),
        },
    )
