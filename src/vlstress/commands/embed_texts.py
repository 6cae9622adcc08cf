"""`vlstress embed-texts`: caption embeddings (L2-normalised float32 .npy) + provenance sidecar.

Reads a manifest or any caption set in the official RoCOCO list format; rows
follow the file order (image by image, captions in order).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import models, provenance
from ..io import sha256_file, sidecar, write_json, write_npy
from ..manifest import caption_table, load_caption_entries
from ..argtypes import add_model_arguments, model_params, model_spec, batch_size


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--captions", required=True, type=Path, help="manifest or official-format caption list")
    add_model_arguments(parser)
    parser.add_argument("--out", required=True, type=Path, help=".npy to write (sidecar: <out>.json)")


def run(args: argparse.Namespace) -> None:
    from ..encoders import encode_texts

    spec = model_spec(args)
    captions = args.captions
    table = caption_table(load_caption_entries(captions))
    resolved = models.resolve_device(args.device)
    model, _, tokenizer = models.load(spec, resolved, threads=args.threads)
    embeddings = encode_texts(model, tokenizer, table.captions, batch_size=batch_size(args, resolved), device=resolved, precision=args.precision, desc=f"{spec.slug} {captions.stem}")
    out = args.out
    write_npy(out, embeddings)
    write_json(
        sidecar(out),
        {
            "kind": "text-embeddings",
            "shape": list(embeddings.shape),
            "captions_per_image": [len(group) for group in table.captions_per_image],
            "provenance": provenance.build(
                "embed-texts",
                model_params(args, spec),
                seed=spec.seed,
                model=models.describe(spec, model),
                device=resolved,
                inputs={str(captions): sha256_file(captions)},
            ),
        },
    )
