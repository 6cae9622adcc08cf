"""`vlstress ei-scores`: embedding influence EI(w, c) = 1 - cos(f(c), f(c without w)) of every word.

For every caption of the manifest and every word position (pure-punctuation tokens
skipped) the scorer model's text encoder embeds the caption and the caption with that
word deleted. Output (JSON, manifest order, EI rounded to 6 decimals):

    {"model": slug, "weights": label, "dataset": name, "n_images", "n_captions", "n_words",
     "provenance": {...},
     "captions": [{"image", "caption_index", "caption",
                   "words": [{"position", "token", "word", "ei"}, ...]}, ...]}
"""

from __future__ import annotations

import argparse
from pathlib import Path

from vlstress import provenance
from vlstress.argtypes import positive_int
from vlstress.caption_data.manifest import load_manifest
from vlstress.embedding import models
from vlstress.embedding.flags import add_model_arguments, batch_size
from vlstress.io import sha256_file, write_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--manifest", required=True, type=Path, help="from `vlstress prepare`")
    add_model_arguments(parser)
    parser.add_argument(
        "--block-size",
        type=positive_int,
        default=512,
        help=(
            "captions encoded per block together with their deletion variants (memory vs. batching)"
        ),
    )
    parser.add_argument(
        "--out", required=True, type=Path, help="JSON to write, e.g. results/text/ei_scores.json"
    )


def run(args: argparse.Namespace) -> None:
    from functools import partial

    from tqdm.auto import tqdm

    from vlstress.embedding.encoders import encode_texts
    from vlstress.embedding.flags import model_params, model_spec
    from vlstress.suites.rococo_text.ei import captions_of, ei_scores

    manifest = load_manifest(args.manifest)
    captions = captions_of(manifest["images"])
    spec = model_spec(args)
    device = models.resolve_device(args.device)
    model, _, tokenizer = models.load(spec, device, threads=args.threads)
    encode = partial(
        encode_texts,
        model,
        tokenizer,
        batch_size=batch_size(args, device),
        device=device,
        precision=args.precision,
        progress=False,
    )
    with tqdm(total=len(captions), desc=f"EI ({spec.slug})", unit="caption") as bar:
        records = ei_scores(captions, encode, block_size=args.block_size, progress=bar.update)
    params = {**model_params(args, spec), "block_size": args.block_size}
    write_json(
        args.out,
        {
            "model": spec.slug,
            "weights": spec.weights_label(),
            "dataset": manifest.get("dataset"),
            "definition": (
                "EI(w, c) = 1 - cos(f(c), f(c without w)), f = L2-normalised text embedding of "
                "the scorer"
            ),
            "n_images": len(manifest["images"]),
            "n_captions": len(records),
            "n_words": sum(len(r["words"]) for r in records),
            "captions": records,
            "provenance": provenance.build(
                "ei-scores",
                params,
                seed=spec.seed,
                model=models.describe(spec, model),
                device=device,
                inputs={str(args.manifest): sha256_file(args.manifest)},
            ),
        },
    )
