"""`vlstress embed-testset`: image embeddings of one classification test set (clean, corrupted, typographic
or OOD). The workflow embeds every zero-shot set of a model in one job (`vlstress embed-zeroshot`);
this command writes the same file for one set."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..argtypes import add_model_arguments, model_spec


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--testset", required=True, type=Path, help="test-set folder (or its manifest.json)")
    add_model_arguments(parser)
    parser.add_argument("--out", required=True, type=Path, help=".npy to write (sidecar: <out>.json)")


def run(args: argparse.Namespace) -> None:
    from .. import embedding_sets

    item = embedding_sets.testset_images(args.testset)
    embedding_sets.require_files([item])
    embedding_sets.write(item, embedding_sets.load(model_spec(args), args), "embed-testset", args.out)
