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
from ._args import add_model_arguments
from ._args import model_spec


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--captions", required=True, type=Path, help="manifest or official-format caption list")
    add_model_arguments(parser)
    parser.add_argument("--out", required=True, type=Path, help=".npy to write (sidecar: <out>.json)")


def run(args: argparse.Namespace) -> None:
    embed_caption_file(args.captions, model_spec(args), args.device, args.batch_size, args.out, step="embed-texts")


def embed_caption_file(
    captions: Path, spec: models.ModelSpec, device: str, batch_size: int, out: Path, *, step: str, also_inputs: tuple[Path, ...] = ()
) -> None:
    """Embed every caption of a manifest or caption set with one model; write .npy + provenance sidecar."""
    from ..encoders import encode_texts

    table = caption_table(load_caption_entries(captions))
    resolved = models.resolve_device(device)
    model, _, tokenizer = models.load(spec, resolved)
    embeddings = encode_texts(model, tokenizer, table.captions, batch_size=batch_size, device=resolved, desc=f"{spec.slug} {captions.stem}")
    write_npy(out, embeddings)
    write_json(
        sidecar(out),
        {
            "kind": "text-embeddings",
            "shape": list(embeddings.shape),
            "captions_per_image": [len(group) for group in table.captions_per_image],
            "provenance": provenance.build(
                step,
                {"batch_size": batch_size, "device": device, "cache_dir": spec.cache_dir},
                seed=spec.seed,
                model=models.describe(spec, model),
                device=resolved,
                inputs={str(p): sha256_file(p) for p in (captions, *also_inputs)},
            ),
        },
    )
