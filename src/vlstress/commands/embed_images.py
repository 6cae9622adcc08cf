"""`vlstress embed-images`: image embeddings (L2-normalised float32 .npy) + provenance sidecar."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..argtypes import add_model_arguments, model_spec


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--manifest", required=True, type=Path, help="manifest from `vlstress prepare`")
    add_model_arguments(parser)
    parser.add_argument("--out", required=True, type=Path, help=".npy to write (sidecar: <out>.json)")


def run(args: argparse.Namespace) -> None:
    from .. import embedding_sets

    item = embedding_sets.original_images(args.manifest)
    spec = model_spec(args)
    loaded = embedding_sets.load(spec, args)
    embedding_sets.write(item, loaded, "embed-images", args.out)
