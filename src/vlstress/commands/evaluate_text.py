"""`vlstress evaluate-text`: image-to-text metrics of one model on one caption set of the text stress-test.

The caption set is in the official RoCOCO list format: per image {"image", "caption":
[originals..., altered...]}: first the image's original captions (as in the manifest), then
its altered captions (altered k replaces one word of original k). Usually 5 + 5; official
RoCOCO images with 6 originals carry 6 + 5 (the official evaluation splits 10 -> 5/5 and
11 -> 6/5); any 0..n altered captions after the n originals are accepted.

Gallery = all original captions + all altered captions; ground truth = the image's original
captions (semantics and tie handling: vlstress.metrics.i2t_text_stress). Writes one metric
record (stress "text") per (model, set).

If the set covers only some manifest images, the metrics use those images, their
original captions and their altered captions; the record says so (`subset`).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any


from .. import metrics, provenance
from ..errors import VlstressError
from ..io import sha256_file, write_json
from ..manifest import caption_table, load_caption_entries, load_manifest
from ._args import int_list, positive_int
from .evaluate import load_embeddings

SET_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--manifest", required=True, type=Path, help="manifest of the original test set")
    parser.add_argument("--image-emb", required=True, type=Path, help="images of the manifest, from `vlstress embed-images`")
    parser.add_argument("--original-emb", required=True, type=Path, help="captions of the manifest, from `vlstress embed-texts`")
    parser.add_argument("--variant-captions", required=True, type=Path, help="caption set (official RoCOCO format)")
    parser.add_argument("--variant-emb", required=True, type=Path, help="the caption set embedded by `vlstress embed-texts`")
    parser.add_argument("--set", required=True, dest="set_name", help="name of the caption set, e.g. same_concept")
    parser.add_argument("--ks", type=int_list, default=list(metrics.DEFAULT_KS), help="comma-separated K of Recall@K")
    parser.add_argument("--chunk-size", type=positive_int, default=1024, help="image rows scored at a time")
    parser.add_argument("--out", required=True, type=Path)


def split_variant_entries(
    entries: list[dict[str, Any]], manifest_images: dict[str, list[str]], source: str
) -> tuple[list[str], list[int]]:
    """Validate a caption set against the manifest; return (images in set order, altered-caption row numbers).

    Row numbers index the flattened caption list of the set (as embedded by embed-texts).
    """
    images: list[str] = []
    seen: set[str] = set()
    altered_rows: list[int] = []
    row = 0
    for pos, entry in enumerate(entries):
        name = entry["image"]
        captions = [entry["caption"]] if isinstance(entry["caption"], str) else entry["caption"]
        if name not in manifest_images:
            raise VlstressError(f"{source}: image {name!r} (entry {pos}) is not in the manifest")
        if name in seen:
            raise VlstressError(f"{source}: image {name!r} is listed twice")
        seen.add(name)
        originals = manifest_images[name]
        n = len(originals)
        n_altered = len(captions) - n
        if not 0 <= n_altered <= n:
            raise VlstressError(
                f"{source}: image {name!r} has {len(captions)} captions, expected {n} originals as in the manifest "
                f"followed by at most {n} altered captions ({n + 1}..{2 * n} in all)"
            )
        for k in range(n):
            if captions[k].strip() != originals[k].strip():
                raise VlstressError(
                    f"{source}: image {name!r} caption {k} is {captions[k]!r} but the manifest has {originals[k]!r}; "
                    "the first half of each entry must be the original captions in manifest order"
                )
        images.append(name)
        altered_rows.extend(range(row + n, row + len(captions)))
        row += len(captions)
    if not altered_rows:
        raise VlstressError(f"{source}: no altered captions (every entry holds only its originals)")
    return images, altered_rows


def run(args: argparse.Namespace) -> None:
    if not SET_NAME.match(args.set_name):
        raise VlstressError(f"--set {args.set_name!r}: use letters, digits, '_', '-' or '.'")
    manifest = load_manifest(args.manifest)
    table = caption_table(manifest["images"])
    groups = table.captions_per_image
    manifest_images = {name: [table.captions[j] for j in groups[i]] for i, name in enumerate(table.images)}
    entries = load_caption_entries(args.variant_captions)
    set_images, altered_rows = split_variant_entries(entries, manifest_images, f"caption set {args.variant_captions}")
    n_set_captions = len(caption_table(entries).captions)

    image_emb, image_meta = load_embeddings(args.image_emb, len(table.images), "image")
    original_emb, original_meta = load_embeddings(args.original_emb, len(table.captions), "text")
    variant_emb, variant_meta = load_embeddings(args.variant_emb, n_set_captions, "caption-set")
    model = image_meta["provenance"]["model"]
    for path, meta in ((args.original_emb, original_meta), (args.variant_emb, variant_meta)):
        if meta["provenance"]["model"] != model:
            raise VlstressError(f"{args.image_emb} and {path} come from different models")
    variant_inputs = variant_meta["provenance"].get("inputs") or {}
    if variant_inputs and sha256_file(args.variant_captions) not in variant_inputs.values():
        raise VlstressError(f"{args.variant_emb} was embedded from another caption file than {args.variant_captions}; re-run `vlstress embed-texts`")

    # restrict to the images of the set, in manifest order
    index = {name: i for i, name in enumerate(table.images)}
    chosen = sorted(index[name] for name in set_images)
    caption_rows = [j for i in chosen for j in groups[i]]
    owner = [new for new, i in enumerate(chosen) for _ in groups[i]]
    scores = metrics.i2t_text_stress(
        image_emb[chosen],
        original_emb[caption_rows],
        owner,
        variant_emb[altered_rows],
        ks=args.ks,
        chunk_size=args.chunk_size,
    )
    subset = len(chosen) < len(table.images)
    write_json(
        args.out,
        {
            "model": model["slug"],
            "weights": model["weights_label"],
            "evaluation": f"text-{args.set_name}",
            "stress": "text",
            "variant": args.set_name,
            "lam": None,
            "variant_seed": None,
            "dataset": manifest["dataset"],
            "n_images": len(chosen),
            "n_captions": len(caption_rows),
            "n_altered_captions": len(altered_rows),
            "subset": {
                "evaluated_on_subset": subset,
                "n_manifest_images": len(table.images),
                "note": (
                    f"caption set covers {len(chosen)} of {len(table.images)} manifest images; "
                    "all metrics (including R@1_original) use those images only"
                    if subset
                    else "caption set covers every manifest image"
                ),
            },
            "metrics": scores,
            "provenance": provenance.build(
                "evaluate-text",
                {"ks": args.ks, "chunk_size": args.chunk_size, "set": args.set_name},
                seed=image_meta["provenance"]["seed"],
                model=model,
                device=image_meta["provenance"]["device"],
                inputs={
                    str(p): sha256_file(p)
                    for p in (args.manifest, args.image_emb, args.original_emb, args.variant_captions, args.variant_emb)
                },
            ),
        },
    )


