"""Embedding sets of one model: what each set reads, how it is embedded, its sidecar, and reuse.

A model step pays a fixed start-up (importing torch and open_clip, CUDA, building the model)
that on a GPU costs more than embedding a 5,000-image set (docs/throughput.md). So the
workflow embeds every set of a model's group in one job: `vlstress embed-retrieval` (the
gallery's images and captions, and what the suites that are on add: image variants, caption
sets) and `vlstress embed-zeroshot` (the classifier of each test set; or the images of each
test set, corrupted copy, typographic copy and OOD set). This engine names no suite: the sets
beyond the gallery come from the modules a stage names (`from_providers`), each suite's
`sets.py`.

Reuse: a set whose inputs, model and settings have not changed since an earlier run is
placed from the reuse folder instead of being embedded again, so adding a seed embeds only
that seed's images. The key is a digest of everything the bytes depend on, and of nothing else:
the sidecar's provenance (params, model, device, package versions, CPU kernel caps) without what
only says where things are (the command line, input paths, the weights cache, the model card's
path; `PLACES`), the bytes of every file the set reads, the package's source files this module and
the providers reach (`Reuse.code`, from `vlstress.code_deps`) and, on CUDA, the GPU and its library
versions. So a set written to another output path, or by a job whose other sets changed (a suite
switched on adds to its command line), is reused; its sidecar then gets this run's provenance, so a
reused set is the very file a fresh run would write. An entry is hard links to the
files a run wrote plus, written last, the sha256 of both; one that fails that check is
reported and the set embedded again. Entries are never removed: the folder grows with every
change of code or settings, and deleting it costs only time.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from vlstress import provenance
from vlstress.caption_data.manifest import (
    caption_table,
    load_caption_entries,
    load_manifest,
)
from vlstress.embedding import models
from vlstress.errors import VlstressError
from vlstress.io import dumps_json, read_json, sha256_file, sidecar, write_json, write_npy
from vlstress.params import Params

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
    decoder: str  # of the image files (vlstress.embedding.decoders)
    # the run-time flags recorded in provenance (embedding.flags.model_params)
    params: dict[str, Any]
    # models.describe: architecture, weights (a checkpoint hashed once per run)
    described: dict[str, Any]
    # what decides the bits beyond provenance (the GPU and its libraries): reuse keys only
    hardware: dict[str, Any]


@dataclass(frozen=True)
class Reuse:
    """Where earlier results are kept, and the digest of the code they depend on."""

    folder: Path
    # code_deps.digest of the engine and the providers: an edit of their code changes every key
    code: str


@dataclass
class EmbeddingSet:
    """One set to embed: the file recorded in provenance, every file its bytes depend on, its
    sidecar fields."""

    name: str  # shown in progress bars and logs
    source: Path  # the manifest / caption file named in provenance `inputs`
    files: list[str]  # every file whose bytes decide the embeddings (source included)
    kind: str  # sidecar `kind`
    fields: dict[str, Any]  # sidecar fields after `shape` (images, variant, captions_per_image)
    embed: Callable[[Loaded], np.ndarray]
    # provenance params beyond the run flags
    extra_params: dict[str, Any] = field(default_factory=dict)
    # sidecar fields read from the loaded model (a classifier's logit scale): decided by the model,
    # which the key holds
    model_fields: Callable[[Loaded], dict[str, Any]] | None = None
    # the kinds of model the set is made for (models.model_kind); empty: every kind (text
    # embeddings need a text tower: IMAGE_TEXT_KINDS)
    model_kinds: tuple[str, ...] = ()
    # a set a sharded job can split: its rows, and the embedding of rows [start, stop)
    rows: int | None = None
    embed_rows: Callable[[Loaded, int, int], np.ndarray] | None = None

    def takes(self, spec: models.ModelSpec) -> bool:
        return not self.model_kinds or spec.kind in self.model_kinds


def load(spec: models.ModelSpec, args) -> Loaded:
    """Load the model of `spec` once, with the run options of the model flags
    (`embedding.flags.add_model_arguments`)."""
    from vlstress.embedding import decoders
    from vlstress.embedding.flags import batch_size, model_params

    device = models.resolve_device(args.device)
    decoders.check(args.decoder, device)  # before the model loads, as model_spec does
    model, preprocess, tokenizer = models.load(spec, device, threads=args.threads)
    # the recorded flags are read after loading: `threads` is what torch runs with
    return Loaded(
        spec,
        model,
        preprocess,
        tokenizer,
        device,
        batch_size(args, device),
        args.workers,
        args.precision,
        args.decoder,
        model_params(args, spec),
        models.describe(spec, model),
        hardware(device),
    )


def hardware(device: str) -> dict[str, Any]:
    """On CUDA, the GPU and the library versions its kernels come from: a reuse folder on a shared
    file system must not hand one GPU type's results to another. On the CPU the kernel caps in
    provenance already pin the bits (vlstress.cpu_kernels)."""
    if not device.startswith("cuda"):
        return {}
    import torch

    index = torch.device(device).index or 0
    return {
        "gpu": torch.cuda.get_device_name(index),
        "capability": list(torch.cuda.get_device_capability(index)),
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "tf32": [torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32],
        "env": {
            name: os.environ.get(name)
            for name in ("NVIDIA_TF32_OVERRIDE", "CUBLAS_WORKSPACE_CONFIG")
        },
    }


def original_images(manifest_path: Path) -> EmbeddingSet:
    """The images of a manifest (`vlstress prepare`), in manifest order."""
    manifest = load_manifest(manifest_path)
    paths = [e["path"] for e in manifest["images"]]

    def embed(run: Loaded) -> np.ndarray:
        from vlstress.embedding.encoders import encode_images

        return encode_images(
            run.model, run.preprocess, paths, desc=f"{run.spec.slug} images", **image_options(run)
        )

    return EmbeddingSet(
        "images",
        manifest_path,
        [str(manifest_path), *paths],
        "image-embeddings",
        {"images": [e["image"] for e in manifest["images"]]},
        embed,
    )


def captions(path: Path, name: str | None = None) -> EmbeddingSet:
    """The captions of a manifest or of a caption set in the official RoCOCO list format, in file
    order."""
    table = caption_table(load_caption_entries(path))

    def embed(run: Loaded) -> np.ndarray:
        from vlstress.embedding.encoders import encode_texts

        return encode_texts(
            run.model,
            run.tokenizer,
            table.captions,
            batch_size=run.batch_size,
            device=run.device,
            precision=run.precision,
            desc=f"{run.spec.slug} {name or path.stem}",
        )

    fields = {"captions_per_image": [len(group) for group in table.captions_per_image]}
    return EmbeddingSet(name or path.stem, path, [str(path)], "text-embeddings", fields, embed)


def testset_images(folder: Path, name: str | None = None) -> EmbeddingSet:
    """The images of a classification test set (`vlstress testset`, or a corrupted, typographic or
    OOD copy of one), in manifest order. `name` (logs and progress bars) defaults to the set's
    dataset name, which the severities of one corruption share."""
    from vlstress.testsets import manifest as testsets

    testset = testsets.load(folder)
    manifest_file = testsets.manifest_path(folder)
    paths = [str(path) for path in testset.image_paths()]
    name = name or testset.dataset
    # the set's protocol may crop a border off each image first (ObjectNet: 2 pixels)
    border = int(testset.source.get("border_crop_px") or 0)

    def embed_rows(run: Loaded, start: int, stop: int) -> np.ndarray:
        from vlstress.embedding.encoders import BorderCropped, encode_images, load_rgb

        part = "" if (start, stop) == (0, len(paths)) else f" [{start}:{stop}]"
        return encode_images(
            run.model,
            run.preprocess,
            paths[start:stop],
            load=BorderCropped(border) if border else load_rgb,
            desc=f"{run.spec.slug} {name}{part}",
            **image_options(run),
        )

    def embed(run: Loaded) -> np.ndarray:
        return embed_rows(run, 0, len(paths))

    fields: dict[str, Any] = {"dataset": testset.dataset}
    if border:
        fields["border_crop_px"] = border
    return EmbeddingSet(
        name,
        manifest_file,
        [str(manifest_file), *paths],
        "image-embeddings",
        fields,
        embed,
        rows=len(paths),
        embed_rows=embed_rows,
    )


def from_providers(
    modules: list[str], group: str, config: Params
) -> list[tuple[str, EmbeddingSet]]:
    """The sets each module adds to `group`: `module.<group>(config)` -> [(file inside the folder,
    set)]. The modules are named by the workflow (a stage's `{providers.GROUP}`), never by this
    engine."""
    import importlib

    found = [
        item
        for module in modules
        for item in getattr(importlib.import_module(module), group)(config)
    ]
    names = [name for name, _ in found]
    clashes = sorted({name for name in names if names.count(name) > 1})
    if clashes:
        raise VlstressError(
            f"two sets would write the same file: {', '.join(clashes)} (sets need distinct names)"
        )
    return found


def require_files(items: list[EmbeddingSet]) -> None:
    """Fail before any model work when a set reads a file that is not there, naming the set and the
    file."""
    for item in items:
        missing = [p for p in item.files if not os.path.isfile(p)]
        if missing:
            raise VlstressError(
                f"set {item.name} ({item.source}): {len(missing)} input file(s) missing, e.g. "
                f"{missing[0]}"
            )


def image_options(run: Loaded) -> dict[str, Any]:
    return {
        "batch_size": run.batch_size,
        "device": run.device,
        "workers": run.workers,
        "precision": run.precision,
        "decoder": run.decoder,
    }


def write(
    item: EmbeddingSet, run: Loaded, step: str, out: Path, reuse: Reuse | None = None
) -> bool:
    """Embed `item` into `out` (+ sidecar `<out>.json`); with a reuse folder, copy an earlier
    identical result instead when there is one. True when the set was reused."""
    block = _provenance(item, run, step)
    key = None
    if reuse is not None:
        key = reuse_key(item, block, reuse.code, run.hardware)
        if _fetch(reuse.folder, key, out, block):
            log.info(
                "%s: reused from %s (inputs, model and settings unchanged)", item.name, reuse.folder
            )
            return True
    start = time.perf_counter()
    embeddings = item.embed(run)
    # the job log's account of where the time went (benchmarks/bench_workflow.py reads it)
    log.info(
        "%s (%s): %d rows embedded in %.2f s",
        item.name,
        item.kind,
        len(embeddings),
        time.perf_counter() - start,
    )
    write_npy(out, embeddings)
    late = item.model_fields(run) if item.model_fields else {}
    write_json(
        sidecar(out),
        {
            "kind": item.kind,
            "shape": list(embeddings.shape),
            **item.fields,
            **late,
            "provenance": block,
        },
    )
    if reuse is not None and key is not None:
        _store(reuse.folder, key, out)
    return False


def _provenance(item: EmbeddingSet, run: Loaded, step: str) -> dict[str, Any]:
    return provenance.build(
        step,
        {**run.params, **item.extra_params},
        seed=run.spec.seed,
        model=run.described,
        device=run.device,
        inputs={str(item.source): sha256_file(item.source)},
    )


def write_folder(
    plan: list[tuple[str, EmbeddingSet]],
    run: Loaded,
    step: str,
    out: Path,
    reuse: Reuse | None = None,
) -> None:
    """Write each (file inside `out`, set) of `plan` into the folder `out`, replaced as a whole, and
    log how many sets were embedded and how many reused. A set not made for the model's kind (the
    per-template text of the prompts suite, for a timm classifier) is left out, and logged."""
    from vlstress.io import atomic_dir

    skipped = [name for name, item in plan if not item.takes(run.spec)]
    if skipped:
        log.info("%s (%s): no %s", run.spec.slug, run.spec.kind, ", ".join(skipped))
    plan = [(name, item) for name, item in plan if item.takes(run.spec)]
    with atomic_dir(out) as folder:
        reused = sum(write(item, run, step, folder / name, reuse) for name, item in plan)
    log.info("%s: %d set(s) embedded, %d reused", run.spec.slug, len(plan) - reused, reused)


# provenance entries that say where things are, not what the bytes are (the inputs' content is
# keyed by `files`); `workers` decides how images are decoded in parallel, never the bytes (the
# decoder does decide them, as precision does: it stays in the key)
PLACES = ("command", "inputs")
PLACE_PARAMS = ("cache_dir", "model_card", "workers")


def reuse_key(item: EmbeddingSet, block: dict[str, Any], code: str, device: dict[str, Any]) -> str:
    """A digest of everything the set's bytes depend on (see the module docstring)."""
    content = {
        "kind": item.kind,
        "fields": item.fields,
        "provenance": {
            **{name: value for name, value in block.items() if name not in PLACES},
            "params": {k: v for k, v in block["params"].items() if k not in PLACE_PARAMS},
        },
        "files": file_digests(item.files),
        "code": code,
        "hardware": device,
    }
    return hashlib.sha256(dumps_json(content).encode()).hexdigest()


def file_digests(paths: list[str]) -> list[str]:
    """sha256 of each file, in order (threads: hashlib releases the GIL)."""
    with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:
        return list(pool.map(sha256_file, paths))


def _entry(reuse: Path, key: str) -> Path:
    return reuse / key[:2] / f"{key}.npy"


def _seal(entry: Path) -> Path:
    """The file that completes an entry: sha256 of its array and of its sidecar, written last."""
    return entry.with_suffix(".sha256")


def _digests(entry: Path) -> str:
    return f"{sha256_file(entry)} {sha256_file(sidecar(entry))}\n"


def _fetch(reuse: Path, key: str, out: Path, block: dict[str, Any]) -> bool:
    """Place the entry of `key` at `out` if there is a complete, intact one, with its sidecar under
    this run's provenance `block` (the rest of the sidecar is decided by the key)."""
    entry = _entry(reuse, key)
    if not _seal(entry).is_file():
        return False  # none, or one whose writing was cut short
    try:  # a damaged or unreadable entry is reported and the set embedded again, never used
        if _seal(entry).read_text(encoding="utf-8") != _digests(entry):
            raise ValueError("its files do not match the digests stored with them")
        meta = read_json(sidecar(entry), "reuse entry sidecar")
        _place(entry, out)
    except Exception as exc:  # noqa: BLE001 - whatever is wrong with it, the set is embedded again
        log.warning("reuse entry %s cannot be used (%s): embedding the set again", entry, exc)
        return False
    write_json(sidecar(out), {**meta, "provenance": block})
    return True


def _store(reuse: Path, key: str, out: Path) -> None:
    """Keep `out` (+ sidecar) under `key`; a folder that cannot be written costs reuse, not the
    run."""
    entry = _entry(reuse, key)
    try:
        _place(out, entry)
        _place(sidecar(out), sidecar(entry))
        seal = _seal(entry).with_name(f".{_seal(entry).name}.{os.getpid()}.tmp")
        seal.write_text(_digests(entry), encoding="utf-8")
        os.replace(seal, _seal(entry))
    except OSError as exc:
        log.warning("could not keep %s for reuse in %s (%s)", out.name, reuse, exc)


def _place(source: Path, dest: Path) -> None:
    """`dest` becomes a hard link to `source` (a copy across file systems), by rename: never a write
    into an existing file, nor a chmod of one (a link shares the file with the entry or the
    output)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        try:
            os.link(source, tmp)
        except OSError:
            shutil.copyfile(source, tmp)
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


# Sharded jobs (`embed.shards`, the cluster's `embed_shards`): shard k of S embeds, of every set it
# can split, the k-th run of whole batches, so every batch holds the images it holds in one job and
# the joined rows are the bytes one job writes (same machine and settings). A set it cannot split
# is embedded whole by shard 0. Each shard folder holds its parts (`<file>` as in the joined folder)
# and SHARD_MANIFEST: per set, its rows, the sidecar it will have and its reuse key; `join_shards`
# writes the folder one job would have written.
SHARD_MANIFEST = "shard.json"


def shard_rows(rows: int, batch_size: int, shard: int, shards: int) -> tuple[int, int]:
    """Rows [start, stop) of a set of `rows` rows that shard `shard` of `shards` embeds: a run of
    whole batches of `batch_size`, as even as batches allow (the last shards may get none)."""
    if not 0 <= shard < shards:
        raise VlstressError(f"shard {shard} of {shards}: shards are numbered 0 to {shards - 1}")
    batches = -(-rows // batch_size)
    first, last = shard * batches // shards, (shard + 1) * batches // shards
    return min(first * batch_size, rows), min(last * batch_size, rows)


def write_shard(
    plan: list[tuple[str, EmbeddingSet]],
    run: Loaded,
    step: str,
    out: Path,
    shard: int,
    shards: int,
    reuse: Reuse | None = None,
) -> None:
    """Shard `shard` of `shards` of what `write_folder` writes, into the folder `out`; a set whose
    reuse entry is there is left to the join, which places it."""
    from vlstress.io import atomic_dir

    plan = [(name, item) for name, item in plan if item.takes(run.spec)]
    manifest: dict[str, Any] = {"shard": shard, "shards": shards, "sets": {}}
    embedded = 0
    with atomic_dir(out) as folder:
        for name, item in plan:
            block = _provenance(item, run, step)
            key = reuse_key(item, block, reuse.code, run.hardware) if reuse else None
            entry: dict[str, Any] = {"kind": item.kind, "fields": item.fields, "key": key}
            entry["provenance"] = block
            if reuse is not None and key is not None and _intact(reuse.folder, key):
                manifest["sets"][name] = {**entry, "reused": True}
                continue
            part: np.ndarray | None = None
            rows: int | None = None
            start = stop = 0
            if item.embed_rows is not None and item.rows is not None:
                rows = item.rows
                start, stop = shard_rows(rows, run.batch_size, shard, shards)
                if stop > start:
                    part = item.embed_rows(run, start, stop)
            elif shard == 0:  # a set it cannot split: shard 0 embeds it whole
                part = item.embed(run)
                rows = stop = len(part)
            if part is not None:
                (folder / name).parent.mkdir(parents=True, exist_ok=True)
                write_npy(folder / name, part)
                embedded += stop - start
            late = item.model_fields(run) if item.model_fields else {}
            manifest["sets"][name] = {
                **entry,
                "late": late,
                "start": start,
                "stop": stop,
                "rows": rows,
            }
        write_json(folder / SHARD_MANIFEST, manifest)
    log.info("%s: shard %d of %d, %d rows embedded", run.spec.slug, shard, shards, embedded)


def _intact(reuse: Path, key: str) -> bool:
    entry = _entry(reuse, key)
    try:
        return _seal(entry).read_text(encoding="utf-8") == _digests(entry)
    except OSError:
        return False


def join_shards(parts: list[Path], out: Path, reuse_folder: Path | None = None) -> None:
    """The folder one job would have written, from the shard folders `parts` (in shard order):
    each set's parts end to end, its sidecar, and its reuse entry kept; a set the shards left to
    reuse placed from the reuse folder. Parts that do not tile a set are refused by name."""
    from vlstress.io import atomic_dir

    manifests = [read_json(part / SHARD_MANIFEST, "shard manifest") for part in parts]
    shards = len(parts)
    found = [(m.get("shard"), m.get("shards")) for m in manifests]
    if found != [(k, shards) for k in range(shards)]:
        raise VlstressError(
            f"the shard folders {', '.join(map(str, parts))} are shards {found} ((shard, of)): "
            f"expected shards 0 to {shards - 1} of {shards}, in order"
        )
    names = list(manifests[0]["sets"])
    for part, manifest in zip(parts, manifests):
        if list(manifest["sets"]) != names:
            raise VlstressError(f"{part}: other sets than shard 0's ({', '.join(names)})")
    with atomic_dir(out) as folder:
        for name in names:
            entries = [manifest["sets"][name] for manifest in manifests]
            block = dict(entries[0]["provenance"])
            block["command"] = one_job_command(block["command"], out)
            _join_set(name, entries, parts, folder / name, block, reuse_folder)
    log.info("%d set(s) joined from %d shards", len(names), shards)


def one_job_command(command: str, out: Path) -> str:
    """The command of one job that writes what the shards wrote: a shard's, without `--shard K
    --shards S` and with `--out` the joined folder. It is what a joined sidecar records (the
    bytes are that job's), so the joined folder is the one job's, byte for byte; the shard
    commands stay in each shard folder's manifest."""
    words = command.split(" ")
    kept: list[str] = []
    skip = False
    for i, word in enumerate(words):
        if skip:
            skip = False
            continue
        if word in ("--shard", "--shards"):
            skip = True
            continue
        if i > 0 and words[i - 1] == "--out":
            word = str(out)
        kept.append(word)
    return " ".join(kept)


def _join_set(
    name: str,
    entries: list[dict[str, Any]],
    parts: list[Path],
    out: Path,
    block: dict[str, Any],
    reuse_folder: Path | None,
) -> None:
    first = entries[0]
    key = first["key"]
    out.parent.mkdir(parents=True, exist_ok=True)
    if any(entry.get("reused") for entry in entries):
        if reuse_folder is not None and _fetch(reuse_folder, key, out, block):
            return
        missing = [str(p) for p, entry in zip(parts, entries) if entry.get("reused")]
        raise VlstressError(
            f"set {name}: shard(s) {', '.join(missing)} left it to the reuse entry {key}, which "
            f"{reuse_folder} no longer holds intact: run those shards again"
        )
    rows = max((entry["rows"] for entry in entries if entry["rows"] is not None), default=0)
    spans = sorted((entry["start"], entry["stop"], part) for entry, part in zip(entries, parts))
    at, arrays = 0, []
    for start, stop, part in spans:
        if stop == start:
            continue
        if start != at:
            raise VlstressError(
                f"set {name}: the shards' rows do not tile 0..{rows} (rows {at} to {start} "
                f"missing, or overlapping at {part})"
            )
        array = np.load(part / name)
        if len(array) != stop - start:
            raise VlstressError(
                f"{part / name}: {len(array)} rows, the manifest says {stop - start}"
            )
        arrays.append(array)
        at = stop
    if not arrays:
        raise VlstressError(f"set {name}: no shard holds a row of it")
    if at != rows:
        raise VlstressError(f"set {name}: the shards hold rows 0 to {at} of {rows}")
    joined = np.concatenate(arrays)
    write_npy(out, joined)
    meta = {"kind": first["kind"], "shape": list(joined.shape), **first["fields"]}
    write_json(sidecar(out), {**meta, **first["late"], "provenance": block})
    if reuse_folder is not None and key is not None:
        _store(reuse_folder, key, out)
