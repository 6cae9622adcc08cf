"""Image-to-text metrics of one model on one caption set of the text stress-test
(`vlstress evaluate-text`).

The caption set is in the official RoCOCO list format (vlstress.suites.rococo_text.caption_sets).
Gallery = all original captions + all altered captions; ground truth = the image's original
captions (semantics and tie policies: vlstress.metrics.stress_recalls). One metric record
(task "text-stress", condition {"set": <set>}) per (model, set).

If the set covers only some manifest images, the metrics use those images, their
original captions and their altered captions; the record says so (dataset.subset).
"""

from __future__ import annotations

from pathlib import Path

from vlstress import provenance
from vlstress import retrieval_metrics as metrics
from vlstress.caption_data.manifest import (
    caption_table,
    load_caption_entries,
    load_manifest,
)
from vlstress.embedding.files import (
    check_embedded_from,
    load_embeddings,
    same_model,
)
from vlstress.io import sha256_file
from vlstress.outcomes import Outcomes
from vlstress.record import Record, assemble
from vlstress.suites.rococo_text import caption_sets


def evaluate(
    manifest_path: Path,
    image_emb_path: Path,
    original_emb_path: Path,
    variant_captions: Path,
    variant_emb_path: Path,
    *,
    set_name: str,
    ks: list[int],
    chunk_size: int,
    ties: str,
) -> tuple[Record, Outcomes]:
    """The `text-stress` record of one model on the caption set `set_name` (file
    `variant_captions`, embedded in `variant_emb_path` by the same model), and its outcomes, one
    per image query (`rank`, `hit1`, `hit1_original`, `false_top1`: StressRanks.item_columns)."""
    caption_sets.check_set_name(set_name)
    manifest = load_manifest(manifest_path)
    table = caption_table(manifest["images"])
    entries = load_caption_entries(variant_captions)
    rows = caption_sets.layout(entries, manifest["images"], f"caption set {variant_captions}")

    image_emb, image_meta = load_embeddings(image_emb_path, len(table.images), "image")
    original_emb, original_meta = load_embeddings(original_emb_path, len(table.captions), "text")
    variant_emb, variant_meta = load_embeddings(
        variant_emb_path, rows.n_set_captions, "caption-set"
    )
    model = same_model(
        image_emb_path,
        image_meta,
        (original_emb_path, original_meta),
        (variant_emb_path, variant_meta),
    )
    check_embedded_from(
        variant_emb_path, variant_meta, variant_captions, "caption file", "embed-retrieval"
    )

    ranked = metrics.stress_ranks(
        image_emb[rows.image_rows],
        original_emb[rows.caption_rows],
        rows.ground_truth,
        variant_emb[rows.altered_rows],
        prefix="i2t",
        ks=ks,
        chunk_size=chunk_size,
        ties=ties,
    )
    record = assemble(
        "text-stress",
        dataset={
            "name": manifest["dataset"],
            "n_images": len(rows.image_rows),
            "n_captions": len(rows.caption_rows),
            "n_altered_captions": len(rows.altered_rows),
            "subset": rows.subset_info(),
        },
        condition={"set": set_name},
        metrics=ranked.metrics,
        provenance=provenance.build(
            "evaluate-text",
            {
                "ks": ks,
                "chunk_size": chunk_size,
                "set": set_name,
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
                    original_emb_path,
                    variant_captions,
                    variant_emb_path,
                )
            },
        ),
    )
    return record, Outcomes("image", ranked.item_columns())
