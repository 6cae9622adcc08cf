"""`vlstress embed-text-variant`: embeddings of one caption set with the model of a reference embedding.

The model is the one that produced `--model-from` (a texts.npy of `vlstress embed-texts`; its
sidecar records slug, arch, weights and seed), so altered captions are embedded by exactly the
model of the originals they compete with. This is `vlstress embed-texts --captions <set>` with
the model flags read from the reference: DVC cannot look up a model's flags inside a `matrix`
over models x sets. Output and sidecar are those of `vlstress embed-texts`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ._args import positive_int


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--captions", required=True, type=Path, help="caption set in the official RoCOCO format")
    parser.add_argument("--model-from", required=True, type=Path, help="texts.npy of `vlstress embed-texts`: its model embeds the set")
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N")
    parser.add_argument("--batch-size", type=positive_int, default=64)
    parser.add_argument("--out", required=True, type=Path, help=".npy to write (sidecar: <out>.json)")


def run(args: argparse.Namespace) -> None:
    from .. import models
    from .embed_texts import embed_caption_file

    spec, _ = models.spec_from_embeddings(args.model_from)
    embed_caption_file(args.captions, spec, args.device, args.batch_size, args.out, step="embed-text-variant", also_inputs=(args.model_from,))
