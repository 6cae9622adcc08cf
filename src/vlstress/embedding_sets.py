"""Embedding sets of one model: what each set reads, how it is embedded, its sidecar, and reuse.

A model step pays a fixed start-up (importing torch and open_clip, CUDA, building the model)
that on a GPU costs more than embedding a 5,000-image set (docs/throughput.md). So the
workflow embeds every retrieval set of a model in one job (`vlstress embed-retrieval`): the
original images and captions, each image variant and each caption set. The single-set
commands (`embed-images`, `embed-texts`, `embed-image-variant`) use the same functions.

Reuse: a set whose inputs, model and settings have not changed since an earlier run is
copied from the reuse folder instead of being embedded again, so adding a seed embeds only
that seed's images. The key is a digest of everything the bytes depend on: the sidecar's
provenance (params, model, device, package versions, CPU kernel caps, the command line),
the bytes of every file the set reads, and the package's source files this module reaches
(`Reuse.code`, from `pipeline.code_deps`). A reused set is therefore the very file a fresh run
would write on this machine.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from . import models, provenance
from .errors import VlstressError
from .io import atomic_path, dumps_json, sha256_file, sidecar, write_json, write_npy
from .manifest import caption_table, load_caption_entries, load_manifest

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Loaded:
    """A model loaded once for every set of a step, with the run options of the step."""

    spec: models.ModelSpec
    model: Any
    preprocess: Callable
    tokenizer: Callable
    device: str
    batch_size: int
    workers: int | None
    precision: str
    params: dict[str, Any]  # the run-time flags recorded in provenance (argtypes.model_params)


@dataclass(frozen=True)
class Reuse:
    """Where earlier results are kept, and the digest of the code they depend on."""

    folder: Path
    code: str  # pipeline.code_deps.digest(__name__): an edit of the embedding code changes every key


@dataclass
class EmbeddingSet:
    """One set to embed: the file recorded in provenance, every file its bytes depend on, its sidecar fields."""

    name: str  # shown in progress bars and logs
    source: Path  # the manifest / caption file named in provenance `inputs`
    files: list[str]  # every file whose bytes decide the embeddings (source included)
    kind: str  # sidecar `kind`
    fields: dict[str, Any]  # sidecar fields after `shape` (images, variant, captions_per_image)
    embed: Callable[[Loaded], np.ndarray]
    extra_params: dict[str, Any] = field(default_factory=dict)  # provenance params beyond the run flags


def load(spec: models.ModelSpec, args) -> Loaded:
    """Load the model of `spec` once, with the run options of the model flags (`argtypes.add_model_arguments`)."""
    from .argtypes import batch_size, model_params

    device = models.resolve_device(args.device)
    model, preprocess, tokenizer = models.load(spec, device, threads=args.threads)
    # the recorded flags are read after loading: `threads` is what torch runs with
    return Loaded(spec, model, preprocess, tokenizer, device, batch_size(args, device), args.workers, args.precision, model_params(args, spec))


def original_images(manifest_path: Path) -> EmbeddingSet:
    """The images of a manifest (`vlstress prepare`), in manifest order."""
    manifest = load_manifest(manifest_path)
    paths = [e["path"] for e in manifest["images"]]

    def embed(run: Loaded) -> np.ndarray:
        from .encoders import encode_images

        return encode_images(run.model, run.preprocess, paths, desc=f"{run.spec.slug} images", **_image_options(run))

    return EmbeddingSet(
        "images", manifest_path, [str(manifest_path), *paths], "image-embeddings", {"images": [e["image"] for e in manifest["images"]]}, embed
    )


def image_variant(folder: Path) -> EmbeddingSet:
    """A perturbed-image variant (`vlstress image-variants`): faithful variants from their JPEG files,
    clean ones perturbed here after the model's own preprocessing (lossless)."""
    from .images import variants

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
        raise VlstressError(f"variant {folder}: unknown mode {mode!r} (known: {', '.join(variants.MODES)})")
    name = manifest["variant"].get("name", folder.name)

    def embed(run: Loaded) -> np.ndarray:
        from .encoders import encode_images

        options = {**_image_options(run), "desc": f"{run.spec.slug} {name}"}
        if mode == "faithful":
            return encode_images(run.model, run.preprocess, files, **options)
        mixer = variants.CleanMixer(files, plan, run.preprocess)
        return encode_images(run.model, mixer, list(range(len(entries))), load=None, **options)

    fields = {"images": [e["image"] for e in entries], "variant": manifest["variant"]}
    return EmbeddingSet(name, manifest_path, [str(manifest_path), *files], "image-variant-embeddings", fields, embed, {"mode": mode})


def captions(path: Path, name: str | None = None) -> EmbeddingSet:
    """The captions of a manifest or of a caption set in the official RoCOCO list format, in file order."""
    table = caption_table(load_caption_entries(path))

    def embed(run: Loaded) -> np.ndarray:
        from .encoders import encode_texts

        return encode_texts(
            run.model, run.tokenizer, table.captions, batch_size=run.batch_size, device=run.device, precision=run.precision,
            desc=f"{run.spec.slug} {name or path.stem}",
        )  # fmt: skip

    fields = {"captions_per_image": [len(group) for group in table.captions_per_image]}
    return EmbeddingSet(name or path.stem, path, [str(path)], "text-embeddings", fields, embed)


def require_files(items: list[EmbeddingSet]) -> None:
    """Fail before any model work when a set reads a file that is not there, naming the set and the file."""
    for item in items:
        missing = [p for p in item.files if not os.path.isfile(p)]
        if missing:
            raise VlstressError(f"set {item.name} ({item.source}): {len(missing)} input file(s) missing, e.g. {missing[0]}")


def _image_options(run: Loaded) -> dict[str, Any]:
    return {"batch_size": run.batch_size, "device": run.device, "workers": run.workers, "precision": run.precision}


def write(item: EmbeddingSet, run: Loaded, step: str, out: Path, reuse: Reuse | None = None) -> bool:
    """Embed `item` into `out` (+ sidecar `<out>.json`); with a reuse folder, copy an earlier identical
    result instead when there is one. True when the set was reused."""
    block = provenance.build(
        step,
        {**run.params, **item.extra_params},
        seed=run.spec.seed,
        model=models.describe(run.spec, run.model),
        device=run.device,
        inputs={str(item.source): sha256_file(item.source)},
    )
    key = None
    if reuse is not None:
        key = reuse_key(item, block, reuse.code)
        if _fetch(reuse.folder, key, out):
            log.info("%s: reused from %s (inputs, model and settings unchanged)", item.name, reuse.folder)
            return True
    start = time.perf_counter()
    embeddings = item.embed(run)
    # the job log's account of where the time went (benchmarks/bench_workflow.py reads it)
    log.info("%s (%s): %d rows embedded in %.2f s", item.name, item.kind, len(embeddings), time.perf_counter() - start)
    write_npy(out, embeddings)
    write_json(sidecar(out), {"kind": item.kind, "shape": list(embeddings.shape), **item.fields, "provenance": block})
    if key is not None:
        _store(reuse.folder, key, out)
    return False


def reuse_key(item: EmbeddingSet, block: dict[str, Any], code: str) -> str:
    """A digest of everything the set's bytes depend on (see the module docstring)."""
    content = {
        "kind": item.kind,
        "fields": item.fields,
        "provenance": block,
        "files": file_digests(item.files),
        "code": code,
    }
    return hashlib.sha256(dumps_json(content).encode()).hexdigest()


def file_digests(paths: list[str]) -> list[str]:
    """sha256 of each file, in order (threads: hashlib releases the GIL)."""
    with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:
        return list(pool.map(sha256_file, paths))


def _entry(reuse: Path, key: str) -> Path:
    return reuse / key[:2] / f"{key}.npy"


def _fetch(reuse: Path, key: str, out: Path) -> bool:
    entry = _entry(reuse, key)
    if not (entry.is_file() and sidecar(entry).is_file()):
        return False
    try:  # a damaged entry is reported and embedded again, never used
        meta = json.loads(sidecar(entry).read_text(encoding="utf-8"))
        shape = list(np.load(entry, mmap_mode="r", allow_pickle=False).shape)
        if meta.get("shape") != shape:
            raise ValueError(f"shape {shape} but its sidecar says {meta.get('shape')}")
    except (OSError, ValueError) as exc:
        log.warning("reuse entry %s is damaged (%s): embedding again", entry, exc)
        return False
    _place(entry, out)
    _place(sidecar(entry), sidecar(out))
    return True


def _store(reuse: Path, key: str, out: Path) -> None:
    entry = _entry(reuse, key)
    _place(out, entry)
    _place(sidecar(out), sidecar(entry))


def _place(source: Path, dest: Path) -> None:
    """`dest` becomes a hard link to `source` (a copy across file systems), atomically."""
    with atomic_path(dest) as tmp:
        tmp.unlink()
        try:
            os.link(source, tmp)
        except OSError:
            shutil.copyfile(source, tmp)
