"""`vlstress embed-image-variant`: embeddings of one perturbed-image variant with one model.

The workflow names the model by its card (`--model-card`, the same card the original
images were embedded with), so perturbed images are embedded by exactly the model of the
originals they are compared with (evaluate-image checks it). Faithful variants are embedded
from their JPEG files; clean variants are perturbed here, after the model's own
preprocessing (lossless).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..argtypes import add_model_arguments, model_spec


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--variant", required=True, type=Path, help="variant folder from `vlstress image-variants`")
    add_model_arguments(parser)
    parser.add_argument("--out", required=True, type=Path, help=".npy to write (sidecar: <out>.json)")


def run(args: argparse.Namespace) -> None:
    from .. import embedding_sets

    item = embedding_sets.image_variant(args.variant)
    spec = model_spec(args)
    loaded = embedding_sets.load(spec, args)
    embedding_sets.write(item, loaded, "embed-image-variant", args.out)
