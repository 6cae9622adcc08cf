"""`vlstress evaluate`: image<->text Recall@K of one model on the original captions."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from .. import metrics, provenance
from ..errors import VlstressError
from ..io import read_json, sha256_file, sidecar, write_json
from ..manifest import caption_table, load_manifest
from ._args import int_list, positive_int


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--manifest", required=True, type=Path)
    parser.add_argument("--image-emb", required=True, type=Path, help="from `vlstress embed-images`")
    parser.add_argument("--text-emb", required=True, type=Path, help="from `vlstress embed-texts` on the manifest")
    parser.add_argument("--ks", type=int_list, default=list(metrics.DEFAULT_KS), help="comma-separated K of Recall@K")
    parser.add_argument("--chunk-size", type=positive_int, default=1024, help="query rows scored at a time")
    parser.add_argument("--out", required=True, type=Path)


def load_embeddings(path: Path, expected_rows: int, what: str) -> tuple[np.ndarray, dict]:
    if not path.is_file():
        raise VlstressError(f"{what} embeddings not found: {path}")
    array = np.load(path, allow_pickle=False)
    if array.ndim != 2 or array.shape[0] != expected_rows:
        raise VlstressError(f"{what} embeddings {path}: shape {array.shape}, expected {expected_rows} rows; re-run the embed step")
    return array, read_json(sidecar(path), f"{what} embeddings sidecar")


def run(args: argparse.Namespace) -> None:
    manifest = load_manifest(args.manifest)
    table = caption_table(manifest["images"])
    image_emb, image_meta = load_embeddings(args.image_emb, len(table.images), "image")
    text_emb, text_meta = load_embeddings(args.text_emb, len(table.captions), "text")
    model = image_meta["provenance"]["model"]
    if text_meta["provenance"]["model"] != model:
        raise VlstressError(f"{args.image_emb} and {args.text_emb} come from different models")
    scores = metrics.image_text_recalls(image_emb, text_emb, table.caption_image, ks=args.ks, chunk_size=args.chunk_size)
    write_json(
        args.out,
        {
            "model": model["slug"],
            "weights": model["weights_label"],
            "evaluation": "original",
            "stress": "none",
            "variant": "original",
            "lam": None,
            "variant_seed": None,
            "dataset": manifest["dataset"],
            "n_images": len(table.images),
            "n_captions": len(table.captions),
            "metrics": scores,
            "provenance": provenance.build(
                "evaluate",
                {"ks": args.ks, "chunk_size": args.chunk_size},
                seed=image_meta["provenance"]["seed"],
                model=model,
                device=image_meta["provenance"]["device"],
                inputs={str(p): sha256_file(p) for p in (args.manifest, args.image_emb, args.text_emb)},
            ),
        },
    )
