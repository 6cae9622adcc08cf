"""Image<->text Recall@K of one model on the original captions (`vlstress evaluate`), and the
per-query outcomes behind it (vlstress.outcomes)."""

from __future__ import annotations

from pathlib import Path

from vlstress import provenance
from vlstress import retrieval_metrics as metrics
from vlstress.caption_data.manifest import caption_table, load_manifest
from vlstress.embedding.files import load_embeddings, same_model
from vlstress.io import sha256_file
from vlstress.outcomes import Outcomes
from vlstress.record import Record, assemble


def evaluate(
    manifest_path: Path,
    image_emb_path: Path,
    text_emb_path: Path,
    *,
    ks: list[int],
    chunk_size: int,
    ties: str,
) -> tuple[Record, Outcomes]:
    """The `retrieval` record of one model: the manifest's images and captions, embedded by the
    same model, scored both ways (vlstress.retrieval_metrics.image_text_ranks); and its outcomes,
    one per query: the image queries, then the caption queries (`direction`, `rank`, `hit1`)."""
    manifest = load_manifest(manifest_path)
    table = caption_table(manifest["images"])
    image_emb, image_meta = load_embeddings(image_emb_path, len(table.images), "image")
    text_emb, text_meta = load_embeddings(text_emb_path, len(table.captions), "text")
    model = same_model(image_emb_path, image_meta, (text_emb_path, text_meta))
    ranked = metrics.image_text_ranks(
        image_emb,
        text_emb,
        table.caption_image,
        ks=ks,
        chunk_size=chunk_size,
        ties=ties,
    )
    record = assemble(
        "retrieval",
        dataset={
            "name": manifest["dataset"],
            "n_images": len(table.images),
            "n_captions": len(table.captions),
        },
        condition={},
        metrics=ranked.metrics,
        provenance=provenance.build(
            "evaluate",
            {"ks": ks, "chunk_size": chunk_size, "ties": ties},
            seed=image_meta["provenance"]["seed"],
            model=model,
            device=image_meta["provenance"]["device"],
            inputs={str(p): sha256_file(p) for p in (manifest_path, image_emb_path, text_emb_path)},
        ),
    )
    return record, Outcomes("query", ranked.item_columns())
