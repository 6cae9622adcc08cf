"""The file of `vlstress ei-scores`: the embedding influence of every word of every caption of a
manifest, computed with the scorer model (vlstress.suites.rococo_text.ei).

    {"model": slug, "weights": label, "dataset": name, "n_images", "n_captions", "n_words",
     "provenance": {...},
     "captions": [{"image", "caption_index", "caption",
                   "words": [{"position", "token", "word", "ei"}, ...]}, ...]}
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from vlstress import provenance
from vlstress.caption_data.manifest import load_manifest
from vlstress.embedding import models
from vlstress.embedding.flags import batch_size
from vlstress.io import sha256_file


def ei_document(
    manifest_path: Path, model_args: argparse.Namespace, *, block_size: int
) -> dict[str, Any]:
    """The EI file of the manifest's captions (manifest order), scored by the model the model
    flags `model_args` name (`vlstress.embedding.flags.add_model_arguments`), `block_size`
    captions encoded at a time with their deletion variants."""
    from functools import partial

    from tqdm.auto import tqdm

    from vlstress.embedding.encoders import encode_texts
    from vlstress.embedding.flags import model_params, model_spec
    from vlstress.suites.rococo_text.ei import captions_of, ei_scores

    manifest = load_manifest(manifest_path)
    captions = captions_of(manifest["images"])
    spec = model_spec(model_args)
    device = models.resolve_device(model_args.device)
    model, _, tokenizer = models.load(spec, device, threads=model_args.threads)
    encode = partial(
        encode_texts,
        model,
        tokenizer,
        batch_size=batch_size(model_args, device),
        device=device,
        precision=model_args.precision,
        progress=False,
    )
    with tqdm(total=len(captions), desc=f"EI ({spec.slug})", unit="caption") as bar:
        records = ei_scores(captions, encode, block_size=block_size, progress=bar.update)
    params = {**model_params(model_args, spec), "block_size": block_size}
    return {
        "model": spec.slug,
        "weights": spec.weights_label(),
        "dataset": manifest.get("dataset"),
        "definition": (
            "EI(w, c) = 1 - cos(f(c), f(c without w)), f = L2-normalised text embedding of "
            "the scorer"
        ),
        "n_images": len(manifest["images"]),
        "n_captions": len(records),
        "n_words": sum(len(r["words"]) for r in records),
        "captions": records,
        "provenance": provenance.build(
            "ei-scores",
            params,
            seed=spec.seed,
            model=models.describe(spec, model),
            device=device,
            inputs={str(manifest_path): sha256_file(manifest_path)},
        ),
    }
