"""The image variants of the RoCOCO image stress-tests as embedding sets of the `retrieval` group:
faithful variants from their JPEG files, clean ones perturbed after the model's own
preprocessing."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vlstress.caption_data.manifest import load_manifest
from vlstress.embedding.sets import EmbeddingSet, Loaded, image_options
from vlstress.errors import VlstressError
from vlstress.params import Params
from vlstress.suites.rococo_image.paths import variant_folders


def image_variant(folder: Path) -> EmbeddingSet:
    """A perturbed-image variant (`vlstress image-variants`): faithful variants from their JPEG
    files, clean ones perturbed here after the model's own preprocessing (lossless)."""
    from vlstress.suites.rococo_image import variants

    manifest_path = folder / "manifest.json"
    manifest = load_manifest(manifest_path)
    plan = variants.plan_from_manifest(manifest)
    mode = manifest["variant"].get("mode", "faithful")
    entries = manifest["images"]
    if mode == "faithful":
        files = [e["path"] for e in entries]
    elif mode == "clean":
        files = [e["source_path"] for e in entries]
    else:
        raise VlstressError(
            f"variant {folder}: unknown mode {mode!r} (known: {', '.join(variants.MODES)})"
        )
    name = manifest["variant"].get("name", folder.name)

    def embed(run: Loaded) -> np.ndarray:
        from vlstress.embedding.encoders import encode_images

        options = {**image_options(run), "desc": f"{run.spec.slug} {name}"}
        if mode == "faithful":
            return encode_images(run.model, run.preprocess, files, **options)
        mixer = variants.CleanMixer(files, plan, run.preprocess)
        return encode_images(run.model, mixer, list(range(len(entries))), load=None, **options)

    fields = {"images": [e["image"] for e in entries], "variant": manifest["variant"]}
    return EmbeddingSet(
        name,
        manifest_path,
        [str(manifest_path), *files],
        "image-variant-embeddings",
        fields,
        embed,
        # clean variants are decoded by their mixer (Pillow), whatever embed.decoder says
        {"mode": mode, **({"decoder": "pil"} if mode == "clean" else {})},
    )


def retrieval(config: Params) -> list[tuple[str, EmbeddingSet]]:
    """The sets this suite adds to a model's retrieval embedding job (file inside its folder,
    set)."""
    return [
        (f"image_variants/{Path(f).name}.npy", image_variant(Path(f)))
        for f in variant_folders(config)
    ]
