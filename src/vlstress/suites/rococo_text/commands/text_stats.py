"""`vlstress text-stats`: statistics of the caption sets, beside the official RoCOCO sets.

For every set file in --variants-dir (official format) and, when the variants are
generated and the official <set>.json is available (--official-dir, or <raw>/rococo of
the karpathy download), for the official set restricted to the manifest's images:
share of one-word edits, parts of speech of replaced words, distinct replacements,
most replaced words, mean scorer cosine(original, altered). Writes JSON (provenance),
CSV, Markdown and a figure (PNG + PDF).
"""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from vlstress.argtypes import optional_str
    from vlstress.embedding.flags import add_model_arguments

    parser.add_argument("--manifest", required=True, type=Path)
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
    add_model_arguments(parser)  # the scorer whose cosine(original, altered) is reported
    parser.add_argument(
        "--out", required=True, type=Path, help="JSON to write (results/text/stats.json)"
    )
    parser.add_argument("--out-csv", required=True, type=Path)
    parser.add_argument("--out-md", required=True, type=Path)
    parser.add_argument(
        "--out-fig", required=True, type=Path, help="PNG to write (a PDF is written beside it)"
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


def run(args: argparse.Namespace) -> None:
    import numpy as np
    import pandas as pd

    from vlstress import provenance
    from vlstress.caption_data.manifest import load_manifest, validate_entries
    from vlstress.embedding import models
    from vlstress.embedding.encoders import encode_texts
    from vlstress.embedding.flags import batch_size, model_params, model_spec
    from vlstress.errors import VlstressError
    from vlstress.io import read_json, sha256_file, write_json, write_text
    from vlstress.suites.rococo_text import stats, variants
    from vlstress.suites.rococo_text.nlp import word_classes

    manifest = load_manifest(args.manifest)
    names = None
    if args.params:
        from vlstress import params as params_module

        names = sorted(params_module.load(args.params)["text_variants"]["sets"])
    files = set_files(args.variants_dir, names)
    if not files:
        raise VlstressError(
            f"no caption sets (<set>.json) in {args.variants_dir}; run `vlstress text-variants` "
            "first"
        )
    wc = word_classes(args.nltk_data)
    sets: dict[str, dict[str, list]] = {}
    inputs = {str(args.manifest): sha256_file(args.manifest)}
    for name, path in files.items():
        entries = validate_entries(read_json(path, f"caption set {name}"), f"caption set {path}")
        sets[name] = {args.source: entries}
        inputs[str(path)] = sha256_file(path)
        if args.source == "generated":
            official = variants.official_path(args.official_dir, args.raw, name)
            if official is not None:
                matched, n = variants.load_official(official, manifest["images"])
                if n:
                    sets[name]["official"] = matched
                    inputs[str(official)] = sha256_file(official)

    spec = model_spec(args)
    device = models.resolve_device(args.device)
    model, _, tokenizer = models.load(spec, device, threads=args.threads)
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
        batch_size=batch_size(args, device),
        device=device,
        precision=args.precision,
        desc=f"{spec.slug} set captions",
    )
    row_of = {c: i for i, c in enumerate(unique)}

    def cosine(originals: list[str], altered: list[str]) -> np.ndarray:
        a = emb[[row_of[c] for c in originals]]
        b = emb[[row_of[c] for c in altered]]
        return np.sum(a * b, axis=1)

    results = {
        name: {
            source: stats.set_stats(entries, wc, cosine) for source, entries in by_source.items()
        }
        for name, by_source in sets.items()
    }
    rows = stats.table_rows(results)
    frame = pd.DataFrame(rows)
    write_text(args.out_csv, frame.to_csv(index=False, float_format="%.4f"))
    write_text(args.out_md, frame.to_markdown(index=False, floatfmt=".3f") + "\n")
    stats.plot(results, args.out_fig, args.out_fig.with_suffix(".pdf"))
    write_json(
        args.out,
        {
            "kind": "text-set-stats",
            "dataset": manifest.get("dataset"),
            "scorer": spec.slug,
            "sets": results,
            "provenance": provenance.build(
                "text-stats",
                {
                    **model_params(args, spec),
                    "source": args.source,
                    "official_dir": args.official_dir,
                },
                seed=spec.seed,
                model=models.describe(spec, model),
                device=device,
                inputs=inputs,
            ),
        },
    )
    print(frame.to_string(index=False))
