"""`vlstress embed-testset`: image embeddings of a classification test set (clean or attacked)."""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import models, provenance
from ..argtypes import add_model_arguments, model_params, model_spec, batch_size
from ..classification import manifest as testsets
from ..io import sha256_file, sidecar, write_json, write_npy


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--testset", required=True, type=Path, help="test-set folder (or its manifest.json)")
    add_model_arguments(parser)
    parser.add_argument("--out", required=True, type=Path, help=".npy to write (sidecar: <out>.json)")


def run(args: argparse.Namespace) -> None:
    from ..encoders import encode_images

    testset = testsets.load(args.testset)
    spec = model_spec(args)
    device = models.resolve_device(args.device)
    model, preprocess, _ = models.load(spec, device, threads=args.threads)
    paths = testset.image_paths()
    embeddings = encode_images(model, preprocess, paths, batch_size=batch_size(args, device), device=device, workers=args.workers, precision=args.precision, desc=f"{spec.slug} {testset.dataset}")
    write_npy(args.out, embeddings)
    manifest_file = testsets.manifest_path(args.testset)
    write_json(
        sidecar(args.out),
        {
            "kind": "image-embeddings",
            "shape": list(embeddings.shape),
            "dataset": testset.dataset,
            "provenance": provenance.build(
                "embed-testset",
                model_params(args, spec),
                seed=spec.seed,
                model=models.describe(spec, model),
                device=device,
                inputs={str(manifest_file): sha256_file(manifest_file)},
            ),
        },
    )
