"""`vlstress evaluate-image`: text-to-image metrics of one model on one mixed-image variant.

Gallery = all original images + all mixed images of the variant; each caption's ground
truth is its own original image (official RoCOCO semantics, see vlstress.images.metrics).
Writes one metric record (stress "image") per (model, variant).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import metrics, provenance
from ..errors import VlstressError
from ..io import sha256_file, write_json
from ..manifest import caption_table, load_manifest
from ._args import int_list, positive_int
from .evaluate import load_embeddings


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--manifest", required=True, type=Path, help="manifest of the original test set")
    parser.add_argument("--image-emb", required=True, type=Path, help="original images, from `vlstress embed-images`")
    parser.add_argument("--text-emb", required=True, type=Path, help="captions of the manifest, from `vlstress embed-texts`")
    parser.add_argument("--variant", required=True, type=Path, help="variant folder from `vlstress image-variants`")
    parser.add_argument("--variant-emb", required=True, type=Path, help="from `vlstress embed-image-variant`")
    parser.add_argument("--ks", type=int_list, default=list(metrics.DEFAULT_KS), help="comma-separated K of Recall@K")
    parser.add_argument("--chunk-size", type=positive_int, default=1024, help="caption rows scored at a time")
    parser.add_argument("--out", required=True, type=Path)


def run(args: argparse.Namespace) -> None:
    from ..images.metrics import t2i_image_stress

    manifest = load_manifest(args.manifest)
    table = caption_table(manifest["images"])
    variant_manifest_path = args.variant / "manifest.json"
    variant_manifest = load_manifest(variant_manifest_path)
    variant = variant_manifest.get("variant")
    if not isinstance(variant, dict) or "method" not in variant:
        raise VlstressError(f"{variant_manifest_path} is not an image-variant manifest; run `vlstress image-variants`")
    if [e["image"] for e in variant_manifest["images"]] != table.images:
        raise VlstressError(f"variant {args.variant} was built from another test set than {args.manifest}; re-run `vlstress image-variants`")
    image_emb, image_meta = load_embeddings(args.image_emb, len(table.images), "image")
    text_emb, text_meta = load_embeddings(args.text_emb, len(table.captions), "text")
    variant_emb, variant_meta = load_embeddings(args.variant_emb, len(table.images), "mixed-image")
    model = image_meta["provenance"]["model"]
    for path, meta in ((args.text_emb, text_meta), (args.variant_emb, variant_meta)):
        if meta["provenance"]["model"] != model:
            raise VlstressError(f"{args.image_emb} and {path} come from different models")
    if variant_meta.get("variant", {}).get("name") != variant.get("name"):
        raise VlstressError(f"{args.variant_emb} embeds another variant than {args.variant}; re-run `vlstress embed-image-variant`")
    scores = t2i_image_stress(image_emb, variant_emb, text_emb, table.caption_image, ks=args.ks, chunk_size=args.chunk_size)
    write_json(
        args.out,
        {
            "model": model["slug"],
            "weights": model["weights_label"],
            "evaluation": variant["evaluation"],
            "stress": "image",
            "variant": variant["method"],
            "lam": float(variant["lam"]),
            "variant_seed": int(variant["seed"]),
            "dataset": manifest["dataset"],
            "n_images": len(table.images),
            "n_captions": len(table.captions),
            "metrics": scores,
            "provenance": provenance.build(
                "evaluate-image",
                {"ks": args.ks, "chunk_size": args.chunk_size, "variant": variant},
                seed=image_meta["provenance"]["seed"],
                model=model,
                device=image_meta["provenance"]["device"],
                inputs={
                    str(p): sha256_file(p)
                    for p in (args.manifest, args.image_emb, args.text_emb, variant_manifest_path, args.variant_emb)
                },
            ),
        },
    )
