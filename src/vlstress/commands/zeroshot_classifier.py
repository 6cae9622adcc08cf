"""`vlstress zeroshot-classifier`: the zero-shot classifier of one model for one test set's class names.

An artifact per (model, class names, templates): `.npy` (classes x dim) + sidecar with the
class names, the templates, the model's logit scale and provenance (vlstress.zeroshot.classifier).
The workflow builds every classifier of a model in its one zero-shot job (`vlstress embed-zeroshot`);
this command writes the same file for one test set.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..argtypes import add_model_arguments, model_spec
from ..zeroshot import templates as template_sets


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--testset", required=True, type=Path, help="test-set folder (or its manifest.json) of `vlstress testset`")
    parser.add_argument(
        "--templates",
        default="openai",
        help=f"{', '.join(template_sets.TEMPLATE_SETS)}, or a .txt/.json file with {{c}} templates (JSON keyed by dataset: FILE#KEY)",
    )
    add_model_arguments(parser)
    parser.add_argument("--out", required=True, type=Path, help=".npy to write (sidecar: <out>.json)")


def run(args: argparse.Namespace) -> None:
    from .. import embedding_sets

    item = embedding_sets.classifier(args.testset, args.templates)
    embedding_sets.write(item, embedding_sets.load(model_spec(args), args), "zeroshot-classifier", args.out)
