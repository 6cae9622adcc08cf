"""`vlstress embed-images`: image embeddings (L2-normalised float32 .npy) + provenance sidecar."""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import models, provenance
from ..io import sha256_file, sidecar, write_json, write_npy
from ..manifest import load_manifest
from ..argtypes import add_model_arguments, model_params, model_spec, batch_size


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--manifest", required=True, type=Path, help="manifest from `vlstress prepare`")
    add_model_arguments(parser)
    parser.add_argument("--out", required=True, type=Path, help=".npy to write (sidecar: <out>.json)")




def run(args: argparse.Namespace) -> None:
    from ..encoders import encode_images

    manifest = load_manifest(args.manifest)
    spec = model_spec(args)
    device = models.resolve_device(args.device)
    model, preprocess, _ = models.load(spec, device, threads=args.threads)
    entries = manifest["images"]
    embeddings = encode_images(model, preprocess, [e["path"] for e in entries], batch_size=batch_size(args, device), device=device, workers=args.workers, precision=args.precision, desc=f"{spec.slug} images")
    write_npy(args.out, embeddings)
    write_json(
        sidecar(args.out),
        {
            "kind": "image-embeddings",
            "shape": list(embeddings.shape),
            "images": [e["image"] for e in entries],
            "provenance": provenance.build(
                "embed-images",
                model_params(args, spec),
                seed=spec.seed,
                model=models.describe(spec, model),
                device=device,
                inputs={str(args.manifest): sha256_file(args.manifest)},
            ),
        },
    )
