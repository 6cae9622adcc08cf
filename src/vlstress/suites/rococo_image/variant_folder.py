"""One perturbed-image variant folder (`vlstress image-variants`): its flags' texts, its checks,
and the folder itself.

OUT/manifest.json holds the entries {image, path, image_id, caption, partner, partner_index,
box, ...}, the variant spec and provenance; in faithful mode OUT/images/*.jpg holds the images.
Perturbed images carry the captions of their original image (the one they are mostly made
of). `partner`/`partner_index` and `box` are null for perturbations that use none.
See vlstress.suites.rococo_image.variants for the perturbations and the two modes.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from vlstress import provenance
from vlstress.argtypes import positive_int
from vlstress.caption_data.manifest import load_manifest
from vlstress.io import atomic_dir, sha256_file, write_json
from vlstress.suites.rococo_image import variants


def method_help() -> str:
    """The help of --method: each perturbation that both modes have, then the corruptions."""
    return "; ".join(
        f"{name}: {entry.description}"
        for name, entry in variants.PERTURBATIONS.items()
        if not entry.faithful_only
    ) + (
        "; <corruption>_s<1-5>: an ImageNet-C corruption at a severity (faithful mode), e.g. fog_s3"
    )


def add_mode_arguments(parser: argparse.ArgumentParser) -> None:
    """--mode and the options of faithful mode (--size, --jpeg-quality)."""
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


def variant_spec(
    method: str, lam_text: str, seed: int, mode: str, size: int, jpeg_quality: int
) -> dict[str, Any]:
    """The variant spec of the manifest (lam parsed from `lam_text`), the options checked: a
    corruption needs faithful mode, a JPEG quality is in 1..100."""
    from vlstress.errors import VlstressError

    lam = variants.parse_lam(lam_text)
    if mode == "clean" and variants.perturbation(method).faithful_only:
        raise VlstressError(
            f"--method {method} corrupts [0, 1] images: use --mode faithful (clean mode "
            "works on normalised tensors)"
        )
    if not 1 <= jpeg_quality <= 100:
        raise VlstressError(f"--jpeg-quality must be in 1..100, got {jpeg_quality}")
    spec = {
        "method": method,
        "lam": lam,
        "lam_text": lam_text,
        "seed": seed,
        "mode": mode,
        "name": variants.variant_name(method, lam_text, seed),
        "evaluation": variants.evaluation_name(method, lam_text, seed),
    }
    if mode == "faithful":
        spec.update({"size": size, "jpeg_quality": jpeg_quality})
    return spec


def write_variant(manifest_path: Path, spec: dict[str, Any], out: Path) -> None:
    """Write the variant folder `out` of the test set of `manifest_path` (as a whole: it appears
    only complete)."""
    manifest = load_manifest(manifest_path)
    entries = manifest["images"]
    plan = variants.make_plan(len(entries), spec["method"], spec["lam"], spec["seed"])
    with atomic_dir(out) as tmp:
        if spec["mode"] == "faithful":
            names = variants.write_faithful(
                entries, plan, tmp, size=spec["size"], quality=spec["jpeg_quality"]
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
            if spec["mode"] == "faithful":
                item["path"] = str(out / "images" / names[index])
                item["sha256"] = sha256_file(tmp / "images" / names[index])
            # clean mode has no `path` on purpose: a plain image embedding cannot embed
            # it by mistake as if it were mixed; the retrieval embedding job mixes on the fly.
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
                    seed=spec["seed"],
                    inputs={str(manifest_path): sha256_file(manifest_path)},
                ),
            },
        )
