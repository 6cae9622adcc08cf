"""`vlstress evaluate`: image<->text Recall@K of one model on the original captions."""

from __future__ import annotations

import argparse
from pathlib import Path

from vlstress import provenance
from vlstress import retrieval_metrics as metrics
from vlstress.argtypes import int_list, positive_int
from vlstress.caption_data.manifest import caption_table, load_manifest
from vlstress.embedding.files import load_embeddings, same_model
from vlstress.io import sha256_file
from vlstress.record import assemble, write_record


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--manifest", required=True, type=Path)
    parser.add_argument(
        "--image-emb", required=True, type=Path, help="from `vlstress embed-images`"
    )
    parser.add_argument(
        "--text-emb", required=True, type=Path, help="from `vlstress embed-texts` on the manifest"
    )
    parser.add_argument(
        "--ks",
        type=int_list,
        default=list(metrics.DEFAULT_KS),
        help="comma-separated K of Recall@K",
    )
    parser.add_argument(
        "--chunk-size", type=positive_int, default=1024, help="query rows scored at a time"
    )
    parser.add_argument(
        "--ties",
        choices=metrics.TIE_POLICIES,
        default="optimistic",
        help="how exactly tied scores rank (vlstress.metrics)",
    )
    parser.add_argument("--out", required=True, type=Path)


def run(args: argparse.Namespace) -> None:
    manifest = load_manifest(args.manifest)
    table = caption_table(manifest["images"])
    image_emb, image_meta = load_embeddings(args.image_emb, len(table.images), "image")
    text_emb, text_meta = load_embeddings(args.text_emb, len(table.captions), "text")
    model = same_model(args.image_emb, image_meta, (args.text_emb, text_meta))
    scores = metrics.image_text_recalls(
        image_emb,
        text_emb,
        table.caption_image,
        ks=args.ks,
        chunk_size=args.chunk_size,
        ties=args.ties,
    )
    write_record(
        args.out,
        assemble(
            "retrieval",
            dataset={
                "name": manifest["dataset"],
                "n_images": len(table.images),
                "n_captions": len(table.captions),
            },
            condition={},
            metrics=scores,
            provenance=provenance.build(
                "evaluate",
                {"ks": args.ks, "chunk_size": args.chunk_size, "ties": args.ties},
                seed=image_meta["provenance"]["seed"],
                model=model,
                device=image_meta["provenance"]["device"],
                inputs={
                    str(p): sha256_file(p) for p in (args.manifest, args.image_emb, args.text_emb)
                },
            ),
        ),
    )
