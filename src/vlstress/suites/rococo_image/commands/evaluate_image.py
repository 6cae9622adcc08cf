"""`vlstress evaluate-image`: text-to-image metrics of one model on one perturbed-image variant.

Gallery = all original images + all perturbed images of the variant; each caption's ground
truth is its own original image (official RoCOCO semantics and tie policies:
vlstress.metrics.stress_recalls). Writes one metric record (task "image-stress", condition
{"perturbation", "lam", "seed"}) per (model, variant).
"""

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
from vlstress.suites.rococo_image import variants


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--manifest", required=True, type=Path, help="manifest of the original test set"
    )
    parser.add_argument(
        "--image-emb",
        required=True,
        type=Path,
        help="original images, from `vlstress embed-images`",
    )
    parser.add_argument(
        "--text-emb",
        required=True,
        type=Path,
        help="captions of the manifest, from `vlstress embed-texts`",
    )
    parser.add_argument(
        "--variant", required=True, type=Path, help="variant folder from `vlstress image-variants`"
    )
    parser.add_argument(
        "--variant-emb", required=True, type=Path, help="from `vlstress embed-image-variant`"
    )
    parser.add_argument(
        "--ks",
        type=int_list,
        default=list(metrics.DEFAULT_KS),
        help="comma-separated K of Recall@K",
    )
    parser.add_argument(
        "--chunk-size", type=positive_int, default=1024, help="caption rows scored at a time"
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
    variant, variant_manifest_path = variants.load_variant(
        args.variant, table.images, args.manifest
    )
    image_emb, image_meta = load_embeddings(args.image_emb, len(table.images), "image")
    text_emb, text_meta = load_embeddings(args.text_emb, len(table.captions), "text")
    variant_emb, variant_meta = load_embeddings(
        args.variant_emb, len(table.images), "variant-image"
    )
    model = same_model(
        args.image_emb, image_meta, (args.text_emb, text_meta), (args.variant_emb, variant_meta)
    )
    variants.check_variant_embeddings(args.variant_emb, variant_meta, variant, args.variant)
    scores = metrics.stress_recalls(
        text_emb,
        image_emb,
        [[int(i)] for i in table.caption_image],
        variant_emb,
        prefix="t2i",
        ks=args.ks,
        chunk_size=args.chunk_size,
        ties=args.ties,
    )
    write_record(
        args.out,
        assemble(
            "image-stress",
            dataset={
                "name": manifest["dataset"],
                "n_images": len(table.images),
                "n_captions": len(table.captions),
            },
            condition={
                "perturbation": variant["method"],
                "lam": float(variant["lam"]),
                "seed": int(variant["seed"]),
            },
            metrics=scores,
            provenance=provenance.build(
                "evaluate-image",
                {
                    "ks": args.ks,
                    "chunk_size": args.chunk_size,
                    "variant": variant,
                    "ties": args.ties,
                },
                seed=image_meta["provenance"]["seed"],
                model=model,
                device=image_meta["provenance"]["device"],
                inputs={
                    str(p): sha256_file(p)
                    for p in (
                        args.manifest,
                        args.image_emb,
                        args.text_emb,
                        variant_manifest_path,
                        args.variant_emb,
                    )
                },
            ),
        ),
    )
