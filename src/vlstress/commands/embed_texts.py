"""`vlstress embed-texts`: caption embeddings (L2-normalised float32 .npy) + provenance sidecar.

Reads a manifest or any caption set in the official RoCOCO list format; rows
follow the file order (image by image, captions in order).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..argtypes import add_model_arguments, model_spec


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--captions", required=True, type=Path, help="manifest or official-format caption list")
    add_model_arguments(parser)
    parser.add_argument("--out", required=True, type=Path, help=".npy to write (sidecar: <out>.json)")


def run(args: argparse.Namespace) -> None:
    from .. import embedding_sets

    item = embedding_sets.captions(args.captions)
    spec = model_spec(args)
    loaded = embedding_sets.load(spec, args)
    embedding_sets.write(item, loaded, "embed-texts", args.out)
