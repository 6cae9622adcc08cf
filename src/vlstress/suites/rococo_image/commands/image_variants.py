"""`vlstress image-variants`: one perturbed-image variant (method, lam, seed) of the test set.

Writes OUT/manifest.json (entries {image, path, image_id, caption, partner, partner_index,
box, ...}, the variant spec and provenance) and, in faithful mode, OUT/images/*.jpg.
Perturbed images carry the captions of their original image (the one they are mostly made
of). `partner`/`partner_index` and `box` are null for perturbations that use none.
See vlstress.images.variants for the perturbations and the two modes.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from vlstress import provenance
from vlstress.argtypes import positive_int, seed_int
from vlstress.caption_data.manifest import load_manifest
from vlstress.io import atomic_dir, sha256_file, write_json
from vlstress.suites.rococo_image import variants


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--manifest", required=True, type=Path, help="manifest from `vlstress prepare`"
    )
    parser.add_argument(
        "--method",
        required=True,
        choices=sorted(variants.PERTURBATIONS),
        help="; ".join(
            f"{name}: {entry.description}"
            for name, entry in variants.PERTURBATIONS.items()
            if not entry.faithful_only
        )
        + (
            "; <corruption>_s<1-5>: an ImageNet-C corruption at a severity (faithful mode), e.g. "
            "fog_s3"
        ),
    )
    parser.add_argument(
        "--lam", required=True, help="share of the original image kept, in [0, 1] (e.g. 0.9)"
    )
    parser.add_argument(
        "--seed", required=True, type=seed_int, help="variant seed: partners and boxes"
    )
    parser.add_argument(
        "--mode",
        choices=variants.MODES,
        default="faithful",
        help=(
            "faithful: 384x384 bicubic + JPEG files as the official release; clean: mix after "
            "the model's preprocessing"
        ),
    )
    parser.add_argument(
        "--size",
        type=positive_int,
        default=variants.FAITHFUL_SIZE,
        help="faithful: square resize (official: 384)",
    )
    parser.add_argument(
        "--jpeg-quality",
        type=positive_int,
        default=variants.FAITHFUL_JPEG_QUALITY,
        help="faithful: JPEG quality (official: 75)",
    )
    parser.add_argument(
        "--out",
        required=True,
        type=Path,
        help="variant folder to write (manifest.json [+ images/])",
    )


def run(args: argparse.Namespace) -> None:
    from vlstress.errors import VlstressError

    lam = variants.parse_lam(args.lam)
    if args.mode == "clean" and variants.perturbation(args.method).faithful_only:
        raise VlstressError(
            f"--method {args.method} corrupts [0, 1] images: use --mode faithful (clean mode "
            "works on normalised tensors)"
        )
    if not 1 <= args.jpeg_quality <= 100:
        raise VlstressError(f"--jpeg-quality must be in 1..100, got {args.jpeg_quality}")
    manifest = load_manifest(args.manifest)
    entries = manifest["images"]
    plan = variants.make_plan(len(entries), args.method, lam, args.seed)
    spec = {
        "method": args.method,
        "lam": lam,
        "lam_text": args.lam,
        "seed": args.seed,
        "mode": args.mode,
        "name": variants.variant_name(args.method, args.lam, args.seed),
        "evaluation": variants.evaluation_name(args.method, args.lam, args.seed),
    }
    if args.mode == "faithful":
        spec.update({"size": args.size, "jpeg_quality": args.jpeg_quality})
    with atomic_dir(args.out) as tmp:
        if args.mode == "faithful":
            names = variants.write_faithful(
                entries, plan, tmp, size=args.size, quality=args.jpeg_quality
            )
        out_entries = []
        for index, entry in enumerate(entries):
            partner = plan.partner(index)
            item = {
                "image": entry["image"],
                "image_id": entry["image_id"],
                "caption": entry["caption"],
                "partner": None if partner is None else entries[partner]["image"],
                "partner_index": partner,
                "box": plan.box(index),
                "source_path": entry["path"],
                "source_sha256": sha256_file(entry["path"]),
            }
            if args.mode == "faithful":
                item["path"] = str(args.out / "images" / names[index])
                item["sha256"] = sha256_file(tmp / "images" / names[index])
            # clean mode has no `path` on purpose: the plain embed-images step cannot embed
            # it by mistake as if it were mixed; `vlstress embed-image-variant` mixes on the fly.
            out_entries.append(item)
        write_json(
            tmp / "manifest.json",
            {
                "dataset": manifest["dataset"],
                "kind": "image-variant",
                "variant": spec,
                "images": out_entries,
                "provenance": provenance.build(
                    "image-variants",
                    {k: spec[k] for k in spec if k not in ("name", "evaluation")},
                    seed=args.seed,
                    inputs={str(args.manifest): sha256_file(args.manifest)},
                ),
            },
        )
