"""Text-to-image metrics of one model on one perturbed-image variant (`vlstress evaluate-image`).

Gallery = all original images + all perturbed images of the variant; each caption's ground
truth is its own original image (official RoCOCO semantics and tie policies:
vlstress.metrics.stress_recalls). One metric record (task "image-stress", condition
{"perturbation", "lam", "seed"}) per (model, variant).
"""

from __future__ import annotations

from pathlib import Path

from vlstress import provenance
from vlstress import retrieval_metrics as metrics
from vlstress.caption_data.manifest import caption_table, load_manifest
from vlstress.embedding.files import load_embeddings, same_model
from vlstress.io import sha256_file
from vlstress.outcomes import Outcomes
from vlstress.record import Record, assemble
from vlstress.suites.rococo_image import variants


def evaluate(
    manifest_path: Path,
    image_emb_path: Path,
    text_emb_path: Path,
    variant_path: Path,
    variant_emb_path: Path,
    *,
    ks: list[int],
    chunk_size: int,
    ties: str,
) -> tuple[Record, Outcomes]:
    """The `image-stress` record of one model on the variant folder `variant_path`, whose images
    `variant_emb_path` holds (checked to be that variant, embedded by the same model), and its
    outcomes, one per caption query (`rank`, `hit1`, `hit1_original`, `false_top1`:
    StressRanks.item_columns)."""
    manifest = load_manifest(manifest_path)
    table = caption_table(manifest["images"])
    variant, variant_manifest_path = variants.load_variant(
        variant_path, table.images, manifest_path
    )
    image_emb, image_meta = load_embeddings(image_emb_path, len(table.images), "image")
    text_emb, text_meta = load_embeddings(text_emb_path, len(table.captions), "text")
    variant_emb, variant_meta = load_embeddings(
        variant_emb_path, len(table.images), "variant-image"
    )
    model = same_model(
        image_emb_path, image_meta, (text_emb_path, text_meta), (variant_emb_path, variant_meta)
    )
    variants.check_variant_embeddings(variant_emb_path, variant_meta, variant, variant_path)
    ranked = metrics.stress_ranks(
        text_emb,
        image_emb,
        [[int(i)] for i in table.caption_image],
        variant_emb,
        prefix="t2i",
        ks=ks,
        chunk_size=chunk_size,
        ties=ties,
    )
    record = assemble(
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
        metrics=ranked.metrics,
        provenance=provenance.build(
            "evaluate-image",
            {
                "ks": ks,
                "chunk_size": chunk_size,
                "variant": variant,
                "ties": ties,
            },
            seed=image_meta["provenance"]["seed"],
            model=model,
            device=image_meta["provenance"]["device"],
            inputs={
                str(p): sha256_file(p)
                for p in (
                    manifest_path,
                    image_emb_path,
                    text_emb_path,
                    variant_manifest_path,
                    variant_emb_path,
                )
            },
        ),
    )
    return record, Outcomes("caption", ranked.item_columns())
