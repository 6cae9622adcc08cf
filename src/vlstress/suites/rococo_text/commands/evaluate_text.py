"""`vlstress evaluate-text`: image-to-text metrics of one model on one caption set of the text
stress-test.

The caption set is in the official RoCOCO list format (vlstress.text.caption_sets).
Gallery = all original captions + all altered captions; ground truth = the image's original
captions (semantics and tie policies: vlstress.metrics.stress_recalls). Writes one metric
record (task "text-stress", condition {"set": <set>}) per (model, set).

If the set covers only some manifest images, the metrics use those images, their
original captions and their altered captions; the record says so (dataset.subset).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from vlstress import provenance
from vlstress import retrieval_metrics as metrics
from vlstress.argtypes import int_list, positive_int
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
from vlstress.record import assemble, write_record
from vlstress.suites.rococo_text import caption_sets


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--manifest", required=True, type=Path, help="manifest of the original test set"
    )
    parser.add_argument(
        "--image-emb",
        required=True,
        type=Path,
        help="images of the manifest, from `vlstress embed-images`",
    )
    parser.add_argument(
        "--original-emb",
        required=True,
        type=Path,
        help="captions of the manifest, from `vlstress embed-texts`",
    )
    parser.add_argument(
        "--variant-captions", required=True, type=Path, help="caption set (official RoCOCO format)"
    )
    parser.add_argument(
        "--variant-emb",
        required=True,
        type=Path,
        help="the caption set embedded by `vlstress embed-texts`",
    )
    parser.add_argument(
        "--set", required=True, dest="set_name", help="name of the caption set, e.g. same_concept"
    )
    parser.add_argument(
        "--ks",
        type=int_list,
        default=list(metrics.DEFAULT_KS),
        help="comma-separated K of Recall@K",
    )
    parser.add_argument(
        "--chunk-size", type=positive_int, default=1024, help="image rows scored at a time"
    )
    parser.add_argument(
        "--ties",
        choices=metrics.TIE_POLICIES,
        default="optimistic",
        help="how exactly tied scores rank (vlstress.metrics)",
    )
    parser.add_argument("--out", required=True, type=Path)


def run(args: argparse.Namespace) -> None:
    caption_sets.check_set_name(args.set_name)
    manifest = load_manifest(args.manifest)
    table = caption_table(manifest["images"])
    entries = load_caption_entries(args.variant_captions)
    rows = caption_sets.layout(entries, manifest["images"], f"caption set {args.variant_captions}")

    image_emb, image_meta = load_embeddings(args.image_emb, len(table.images), "image")
    original_emb, original_meta = load_embeddings(args.original_emb, len(table.captions), "text")
    variant_emb, variant_meta = load_embeddings(
        args.variant_emb, rows.n_set_captions, "caption-set"
    )
    model = same_model(
        args.image_emb,
        image_meta,
        (args.original_emb, original_meta),
        (args.variant_emb, variant_meta),
    )
    check_embedded_from(
        args.variant_emb, variant_meta, args.variant_captions, "caption file", "embed-texts"
    )

    scores = metrics.stress_recalls(
        image_emb[rows.image_rows],
        original_emb[rows.caption_rows],
        rows.ground_truth,
        variant_emb[rows.altered_rows],
        prefix="i2t",
        ks=args.ks,
        chunk_size=args.chunk_size,
        ties=args.ties,
    )
    write_record(
        args.out,
        assemble(
            "text-stress",
            dataset={
                "name": manifest["dataset"],
                "n_images": len(rows.image_rows),
                "n_captions": len(rows.caption_rows),
                "n_altered_captions": len(rows.altered_rows),
                "subset": rows.subset_info(),
            },
            condition={"set": args.set_name},
            metrics=scores,
            provenance=provenance.build(
                "evaluate-text",
                {
                    "ks": args.ks,
                    "chunk_size": args.chunk_size,
                    "set": args.set_name,
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
                        args.original_emb,
                        args.variant_captions,
                        args.variant_emb,
                    )
                },
            ),
        ),
    )
