"""The params block of the overlap suite (`overlap`): schema and checks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from vlstress.errors import VlstressError
from vlstress.params_check import unknown

SCHEMA = yaml.safe_load(
    r"""
overlap:
  type: object
  description: "near-duplicates of test images in a training collection (docs/overlap.md)"
  required: [train, testsets, detector, index, nlist, nprobe, threshold, planted, recall, seed]
  additionalProperties: false
  properties:
    train:
      type: object
      required: [kind, path, max_images]
      additionalProperties: false
      properties:
        kind: {enum: [folder, shards, embeddings],
               description: "folder of images | shards (a text file listing .tar shards, one per
                             line) | embeddings (an .npy of the detector's L2-normalised image
                             embeddings)"}
        path: {type: string}
        max_images: {type: [integer, "null"], minimum: 1,
                     description: "the first N images (sorted; null = all)"}
    testsets:
      type: array
      minItems: 1
      uniqueItems: true
      items: {type: string, description: "a key of zeroshot.testsets"}
    detector: {type: string,
               description: "the model whose image embeddings find the neighbours (a key of
                             models)"}
    index: {enum: [auto, flat, ivf],
            description: "faiss index: flat = exact; ivf = IndexIVFFlat; auto = flat up to
                          100,000 training images"}
    nlist: {type: integer, minimum: 1, description: "IVF: number of lists"}
    nprobe: {type: integer, minimum: 1, description: "IVF: lists searched per query"}
    threshold: {type: [number, "null"], minimum: -1, maximum: 1,
                description: "cosine similarity from which a neighbour is a near-duplicate;
                              null = calibrated on the planted duplicates"}
    planted: {type: integer, minimum: 1,
              description: "training images copied per transform (resized, re-encoded,
                            cropped) to calibrate the threshold"}
    recall: {type: number, exclusiveMinimum: 0, maximum: 1,
             description: "share of the planted duplicates the threshold keeps"}
    seed: {type: integer, minimum: 0}
"""
)


def problems(params: dict[str, Any], on: frozenset[str]) -> list[str]:
    """Test sets and detector (an image-text model) must exist; an embedding file cannot calibrate
    (no images to copy), and its header must say float rows of the detector's width."""
    from vlstress.embedding.kinds import IMAGE_TEXT_KINDS, model_kind

    if "overlap" not in on or "zeroshot" not in on or "overlap" not in params:
        return []
    found = []
    block, testsets = params["overlap"], params["zeroshot"]["testsets"]
    for name in block["testsets"]:
        if name not in testsets:
            found.append("overlap.testsets: " + unknown("test set", name, testsets))
    models = params.get("models") or {}
    if block["detector"] not in models:
        found.append("overlap.detector: " + unknown("model", block["detector"], models))
    elif model_kind(models[block["detector"]]["arch"]) not in IMAGE_TEXT_KINDS:
        found.append(
            f"overlap.detector: {block['detector']!r} is a supervised classifier: near duplicates "
            "are found in an image-text model's embedding space (name an open_clip model)"
        )
    if block["train"]["kind"] == "embeddings" and block["threshold"] is None:
        found.append(
            "overlap.threshold: a training collection given as embeddings has no images to plant "
            "duplicates of: give the threshold"
        )
    if block["train"]["kind"] == "embeddings":
        found += _embedding_file_problems(block, models)
    return found


def _embedding_file_problems(block: dict[str, Any], models: dict[str, Any]) -> list[str]:
    """What the `.npy` header says (an empty file, another format, not floats, not rows x width,
    no rows, another width than the detector's). A file not there yet may be a step's output."""
    from vlstress.suites.overlap import embedding_file

    path = Path(block["train"]["path"])
    if not path.exists():
        return []
    entry = models.get(block["detector"]) or {}
    width = open_clip_width(str(entry.get("arch", "")))
    try:
        embedding_file.header(path, width)
    except VlstressError as exc:
        return [f"overlap.train.path: {exc}"]
    return []


def open_clip_width(arch: str) -> int | None:
    """The embedding width of an open_clip architecture (`embed_dim` of its JSON config, read
    without importing open_clip), None where it cannot be told (another kind, a hub arch)."""
    import importlib.util
    import json
    import os

    from vlstress.embedding.models import MODEL_CONFIGS_ENV

    found = importlib.util.find_spec("open_clip")
    if not arch or found is None or found.origin is None:
        return None
    folders = [Path(found.origin).parent / "model_configs"]
    folders += [Path(f) for f in os.environ.get(MODEL_CONFIGS_ENV, "").split(os.pathsep) if f]
    for folder in reversed(folders):  # an added config of the same name wins, as in open_clip
        config = folder / f"{arch}.json"
        if config.is_file():
            try:
                width = json.loads(config.read_text()).get("embed_dim")
            except (OSError, ValueError):
                return None
            return width if isinstance(width, int) else None
    return None
