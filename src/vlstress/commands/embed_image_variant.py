"""`vlstress embed-image-variant`: embeddings of one perturbed-image variant with one model.

The workflow names the model by its card (`--model-card`, the same card the original
images were embedded with), so perturbed images are embedded by exactly the model of the
originals they are compared with (evaluate-image checks it). Faithful variants are embedded
from their JPEG files; clean variants are perturbed here, after the model's own
preprocessing (lossless).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import models, provenance
from ..errors import VlstressError
from ..io import sha256_file, sidecar, write_json, write_npy
from ..manifest import load_manifest
from ..argtypes import add_model_arguments, model_params, model_spec, batch_size


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--variant", required=True, type=Path, help="variant folder from `vlstress image-variants`")
    add_model_arguments(parser)
    parser.add_argument("--out", required=True, type=Path, help=".npy to write (sidecar: <out>.json)")


def run(args: argparse.Namespace) -> None:
    from ..encoders import encode_images
    from ..images import variants

    manifest_path = args.variant / "manifest.json"
    manifest = load_manifest(manifest_path)
    plan = variants.plan_from_manifest(manifest)
    mode = manifest["variant"].get("mode", "faithful")
    entries = manifest["images"]
    spec = model_spec(args)
    device = models.resolve_device(args.device)
    model, preprocess, _ = models.load(spec, device, threads=args.threads)
    desc = f"{spec.slug} {manifest['variant'].get('name', args.variant.name)}"
    run_options = {"batch_size": batch_size(args, device), "device": device, "workers": args.workers, "precision": args.precision, "desc": desc}
    if mode == "faithful":
        embeddings = encode_images(model, preprocess, [e["path"] for e in entries], **run_options)
    elif mode == "clean":
        mixer = variants.CleanMixer([e["source_path"] for e in entries], plan, preprocess)
        embeddings = encode_images(model, mixer, list(range(len(entries))), load=None, **run_options)
    else:
        raise VlstressError(f"variant {args.variant}: unknown mode {mode!r} (known: {', '.join(variants.MODES)})")
    write_npy(args.out, embeddings)
    write_json(
        sidecar(args.out),
        {
            "kind": "image-variant-embeddings",
            "shape": list(embeddings.shape),
            "images": [e["image"] for e in entries],
            "variant": manifest["variant"],
            "provenance": provenance.build(
                "embed-image-variant",
                {**model_params(args, spec), "mode": mode},
                seed=spec.seed,
                model=models.describe(spec, model),
                device=device,
                inputs={str(manifest_path): sha256_file(manifest_path)},
            ),
        },
    )
