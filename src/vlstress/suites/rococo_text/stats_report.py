"""The report of `vlstress text-stats`: statistics of the caption sets (vlstress.suites.
rococo_text.stats), beside the official RoCOCO sets.

Every set file of the variants folder (official format; the sets the params name, or every
`<set>.json`) is described and, when the variants are generated and the official `<set>.json`
is available (official folder, or `<raw>/rococo` of the karpathy download), so is the official
set restricted to the manifest's images. The scorer model's text embeddings give the mean
cosine(original, altered).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


def add_set_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags that say which sets are described: the variants folder, the params that name
    its sets, what the files are and where the official files and WordNet are."""
    from vlstress.argtypes import optional_str

    parser.add_argument(
        "--variants-dir",
        required=True,
        type=Path,
        help="folder of <set>.json caption sets (`vlstress text-variants`)",
    )
    parser.add_argument(
        "--params",
        action="append",
        type=Path,
        default=None,
        help=(
            "params file(s): only the sets of text_variants.sets are read (default: every "
            "<set>.json in the folder)"
        ),
    )
    parser.add_argument(
        "--source",
        default="generated",
        choices=["generated", "official"],
        help="what the set files are",
    )
    parser.add_argument(
        "--official-dir",
        type=optional_str,
        default=None,
        help="folder of the official <set>.json (None = <raw>/rococo)",
    )
    parser.add_argument("--raw", type=optional_str, default=None, help="the dataset's raw folder")
    parser.add_argument(
        "--nltk-data", default="data/nltk_data", help="nltk data folder holding WordNet"
    )


def set_files(folder: Path, names: list[str] | None = None) -> dict[str, Path]:
    """The caption-set files to describe: the named sets (params), or every set file in the
    folder."""
    from vlstress.errors import VlstressError
    from vlstress.suites.rococo_text.variants import OFFICIAL_SETS

    if names is not None:
        missing = [name for name in names if not (folder / f"{name}.json").is_file()]
        if missing:
            raise VlstressError(
                f"caption set(s) {', '.join(missing)} not in {folder}; run "
                "`vlstress text-variants` first"
            )
        files = {name: folder / f"{name}.json" for name in names}
    else:
        files = {
            p.stem: p
            for p in sorted(folder.glob("*.json"))
            if not p.name.endswith(".json.json") and not p.name.startswith(".")
        }
    order = [s for s in OFFICIAL_SETS if s in files] + sorted(
        s for s in files if s not in OFFICIAL_SETS
    )
    return {s: files[s] for s in order}


def selected_files(variants_dir: Path, params_files: Sequence[Path] | None) -> dict[str, Path]:
    """The set files of `variants_dir` to describe: those of text_variants.sets of the params
    files, or, none given, every set file; at least one."""
    from vlstress.errors import VlstressError

    names = None
    if params_files:
        from vlstress.params import Params
        from vlstress.suites.rococo_text.block import TextVariantsParams

        names = sorted(Params.load(params_files).block(TextVariantsParams).sets)
    files = set_files(variants_dir, names)
    if not files:
        raise VlstressError(
            f"no caption sets (<set>.json) in {variants_dir}; run `vlstress text-variants` first"
        )
    return files


def read_sets(
    files: dict[str, Path],
    manifest: dict[str, Any],
    manifest_path: Path,
    source: str,
    official_dir: str | None,
    raw: str | None,
) -> tuple[dict[str, dict[str, list]], dict[str, str]]:
    """({set: {source: entries}}, the sha256 of every file read): each set file as `source`
    and, for generated sets, the official set matched to the manifest's images when there is
    one."""
    from vlstress.caption_data.manifest import validate_entries
    from vlstress.io import read_json, sha256_file
    from vlstress.suites.rococo_text import variants

    sets: dict[str, dict[str, list]] = {}
    inputs = {str(manifest_path): sha256_file(manifest_path)}
    for name, path in files.items():
        entries = validate_entries(read_json(path, f"caption set {name}"), f"caption set {path}")
        sets[name] = {source: entries}
        inputs[str(path)] = sha256_file(path)
        if source == "generated":
            official = variants.official_path(official_dir, raw, name)
            if official is not None:
                matched, n = variants.load_official(official, manifest["images"])
                if n:
                    sets[name]["official"] = matched
                    inputs[str(official)] = sha256_file(official)
    return sets, inputs


@dataclass(frozen=True)
class SetStats:
    """The statistics of every set (`results`: {set: {source: stats}}), their table (one row per
    set and source) and the JSON file (`document`, with provenance)."""

    results: dict[str, dict[str, dict[str, Any]]]
    frame: pd.DataFrame
    document: dict[str, Any]


def describe(
    manifest_path: Path,
    variants_dir: Path,
    params_files: Sequence[Path] | None,
    *,
    source: str,
    official_dir: str | None,
    raw: str | None,
    nltk_data: str,
    model_args: argparse.Namespace,
) -> SetStats:
    """The statistics of the sets (see the module docstring), the cosines from the scorer the
    model flags `model_args` name (`vlstress.embedding.flags.add_model_arguments`)."""
    import numpy as np
    import pandas as pd

    from vlstress import provenance
    from vlstress.caption_data.manifest import load_manifest
    from vlstress.embedding import models
    from vlstress.embedding.encoders import encode_texts
    from vlstress.embedding.flags import batch_size, model_params, model_spec
    from vlstress.suites.rococo_text import stats
    from vlstress.suites.rococo_text.nlp import word_classes

    manifest = load_manifest(manifest_path)
    files = selected_files(variants_dir, params_files)
    wc = word_classes(nltk_data)
    sets, inputs = read_sets(files, manifest, manifest_path, source, official_dir, raw)

    spec = model_spec(model_args)
    device = models.resolve_device(model_args.device)
    model, _, tokenizer = models.load(spec, device, threads=model_args.threads)
    unique = sorted(
        {
            c
            for by_source in sets.values()
            for entries in by_source.values()
            for e in entries
            for c in e["caption"]
        }
    )
    emb = encode_texts(
        model,
        tokenizer,
        unique,
        batch_size=batch_size(model_args, device),
        device=device,
        precision=model_args.precision,
        desc=f"{spec.slug} set captions",
    )
    row_of = {c: i for i, c in enumerate(unique)}

    def cosine(originals: list[str], altered: list[str]) -> np.ndarray:
        a = emb[[row_of[c] for c in originals]]
        b = emb[[row_of[c] for c in altered]]
        return np.sum(a * b, axis=1)

    results = {
        name: {
            origin: stats.set_stats(entries, wc, cosine) for origin, entries in by_source.items()
        }
        for name, by_source in sets.items()
    }
    document = {
        "kind": "text-set-stats",
        "dataset": manifest.get("dataset"),
        "scorer": spec.slug,
        "sets": results,
        "provenance": provenance.build(
            "text-stats",
            {
                **model_params(model_args, spec),
                "source": source,
                "official_dir": official_dir,
            },
            seed=spec.seed,
            model=models.describe(spec, model),
            device=device,
            inputs=inputs,
        ),
    }
    return SetStats(results, pd.DataFrame(stats.table_rows(results)), document)
