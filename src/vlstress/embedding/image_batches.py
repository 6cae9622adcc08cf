"""Decoded, preprocessed image batches for the image encoder: in this process or in worker
processes.

workers=0 decodes and preprocesses in this process, one image after the other (the serial
baseline), on one torch thread as a worker does; workers=N runs the same per-image work in N
torch DataLoader worker processes while the model encodes the previous batch. Each image is
preprocessed alone and the batch is stacked in input order either way, so the batches, and hence
the embeddings, are the same bytes whatever the number of workers.

A VlstressError of one image (missing, corrupt) travels back from the worker as data and is
raised here with its own message; DataLoader would otherwise re-raise it with the worker's
whole traceback as the message.

On CUDA, open_clip's preprocess is split (vlstress.device_preprocess): the workers only decode,
and the resize, crop and normalisation run on the GPU, with the same bits as on the CPU. With
decoder `nvjpeg` (vlstress.embedding.decoders) the workers only read the files' bytes and the
JPEGs of a batch are decoded on the GPU too.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils.data import DataLoader, Dataset, default_collate, get_worker_info

from vlstress.embedding.device_preprocess import to_uint8
from vlstress.errors import VlstressError

log = logging.getLogger(__name__)

# Default cap: more processes than this mostly cost start-up time and shared memory. Raise it
# with --workers where one GPU eats images faster than 8 cores decode them.
MAX_DEFAULT_WORKERS = 8
CUDA_PREFETCH_BATCHES = 4  # per worker: keeps a fast GPU fed across slow images


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity: a SLURM job's allocation), else all."""
    return (
        len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    )


def default_workers(device: str) -> int:
    """Workers when --workers is None: the job's cores the model does not use, at most
    MAX_DEFAULT_WORKERS.

    On CUDA the step's own process mostly waits for the GPU: every core decodes. On CPU the
    forward already runs on torch's threads; workers beside them on the same cores only
    preempt its OpenMP threads (measured: docs/throughput.md), so they get the rest, if any.
    """
    cores = available_cores()
    spare = cores if device.startswith("cuda") else cores - torch.get_num_threads()
    return min(max(spare, 0), MAX_DEFAULT_WORKERS)


def resolve_workers(workers: int | None, n_batches: int, device: str) -> int:
    """Worker processes to start: the request (None = default_workers), never more than batches."""
    wanted = default_workers(device) if workers is None else workers
    if wanted < 0:
        raise VlstressError(f"workers must be >= 0 (0 = decode in this process), got {workers}")
    return min(wanted, n_batches)


@dataclass(frozen=True)
class LoadFailure:
    """An image that could not be loaded, carried back from a worker instead of an exception."""

    message: str


class PreprocessedImages(Dataset):
    """preprocess(load(item)) for each item; `load=None` hands the item to preprocess as it is."""

    def __init__(self, items: Sequence, preprocess: Callable, load: Callable | None):
        self.items = items
        self.preprocess = preprocess
        self.load = load

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int):
        item = self.items[index]
        try:
            return self.preprocess(item if self.load is None else self.load(item))
        except VlstressError as exc:
            return LoadFailure(str(exc))


def collate(items: list):
    """The stacked batch, or the batch's first LoadFailure."""
    for item in items:
        if isinstance(item, LoadFailure):
            return item
    return default_collate(items)  # torch.stack, in a worker straight into shared memory


def collate_flat(items: list):
    """(one flat uint8 tensor of the batch's decoded images, their shapes), or the first
    LoadFailure.

    The images differ in size, so they cannot be stacked; one buffer instead of one tensor per
    image crosses from the worker in one shared-memory segment and is pinned and copied to the
    GPU in one piece (per-image tensors capped the rate at ~960 images/s on 16 cores)."""
    for item in items:
        if isinstance(item, LoadFailure):
            return item
    flat = torch.empty(sum(item.numel() for item in items), dtype=torch.uint8)
    if (
        get_worker_info() is not None
    ):  # as default_collate does: written straight into shared memory
        flat.share_memory_()
    torch.cat([item.reshape(-1) for item in items], out=flat)
    return flat, [tuple(item.shape) for item in items]


def unflatten(flat: torch.Tensor, shapes: list[tuple[int, ...]]) -> list[torch.Tensor]:
    """The images of a collate_flat buffer, as views of it."""
    sizes = [math.prod(shape) for shape in shapes]
    return [chunk.view(shape) for chunk, shape in zip(torch.split(flat, sizes), shapes)]


def one_torch_thread(worker_id: int) -> None:
    """Worker init: one torch thread per worker, so N workers plus the model's threads do not
    oversubscribe the cores (current torch does this in its worker loop too; this keeps it so)."""
    torch.set_num_threads(1)


def in_one_thread(loader: DataLoader) -> Iterator:
    """The batches of an in-process loader (workers=0), each decoded and preprocessed on one torch
    thread, as a worker does (`one_torch_thread`); the model's forward gets its threads back in
    between. The per-image tensor operations are far too small for a thread pool, and on shared
    cores a pool waits on whichever of its threads was preempted (measured on 2 busy cores: the
    ToTensor and Normalize of a crop 0.9 ms on one thread, 20 ms on two). Elementwise either way:
    the same bytes."""
    threads = torch.get_num_threads()
    batches = iter(loader)
    while True:
        torch.set_num_threads(1)
        try:
            batch = next(batches, None)
        finally:
            torch.set_num_threads(threads)
        if batch is None:
            return
        yield batch


def image_batches(
    items: Sequence,
    preprocess: Callable,
    *,
    batch_size: int,
    workers: int | None,
    device: str,
    load: Callable | None,
    decoder: str = "pil",
    desc: str = "images",
) -> Iterator[torch.Tensor]:
    """Batches of preprocessed images on `device`, in input order (see the module docstring)."""
    from vlstress.embedding import decoders

    decoders.check(decoder, device)
    n_workers = resolve_workers(workers, math.ceil(len(items) / batch_size), device)
    cuda = device.startswith("cuda")
    on_device = split_on_device(preprocess) if cuda else None
    on_gpu = decoder == "nvjpeg" and load is not None
    if decoder == "nvjpeg" and not on_gpu:
        log.info(
            "%s: decoder nvjpeg does not apply: the items are not image files (the preprocess "
            "decodes them itself, with Pillow)",
            desc,
        )
    options: dict[str, Any] = {}
    if n_workers:
        options = {
            "worker_init_fn": one_torch_thread,
            "prefetch_factor": CUDA_PREFETCH_BATCHES if cuda else 2,
        }
    if on_gpu and load is not None:  # the workers read bytes (or decode what nvJPEG does not take)
        dataset = PreprocessedImages(items, decoders.as_is, decoders.ForGpu(load))
    else:
        dataset = PreprocessedImages(items, preprocess if on_device is None else to_uint8, load)
    loader = DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=False,
        num_workers=n_workers,
        collate_fn=collate if on_device is None and not on_gpu else collate_flat,
        pin_memory=cuda,
        **options,
    )
    if not on_gpu:
        for batch in loader if n_workers else in_one_thread(loader):
            if isinstance(batch, LoadFailure):
                raise VlstressError(batch.message)
            if on_device is None:
                yield batch.to(device, non_blocking=cuda)
            else:
                flat, shapes = batch
                yield on_device(unflatten(flat.to(device, non_blocking=True), shapes))
        return
    if on_device is None:
        log.warning(
            "%s: decoder nvjpeg with a preprocess that does not run on the GPU: the decoded "
            "images are copied back and preprocessed in this process, one by one (slow)",
            desc,
        )
    tally, start = decoders.Tally(), 0
    for batch in loader if n_workers else in_one_thread(loader):
        if isinstance(batch, LoadFailure):
            raise VlstressError(batch.message)
        flat, shapes = batch
        parts = unflatten(flat, shapes)  # JPEG bytes stay on the CPU: nvJPEG reads them there
        paths = [items[i] for i in range(start, start + len(parts))]
        start += len(parts)
        images = decoders.decode_batch(parts, paths, device, tally)
        if on_device is not None:
            yield on_device(images)
        else:
            yield torch.stack([preprocess(to_pil(image)) for image in images]).to(device)
    tally.report(desc)


def to_pil(image: torch.Tensor):
    """A uint8 (H, W, 3) tensor (on any device) as a PIL image."""
    from PIL import Image

    return Image.fromarray(image.contiguous().cpu().numpy())


def split_on_device(preprocess: Callable):
    """The GPU half of `preprocess` (vlstress.device_preprocess; same bits as the CPU), or None:
    then the workers run all of it, and the log says why."""
    from vlstress.embedding.device_preprocess import split

    on_device, why = split(preprocess)
    if on_device is None:
        log.info("image preprocessing stays in the decoding workers: %s", why)
    return on_device
