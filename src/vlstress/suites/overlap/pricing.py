"""Pricing: the detector embeds the training collection and the planted copies (once, one job;
the test sets are its zero-shot embeddings), then faiss searches on the CPU."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vlstress.cost import sizes
from vlstress.cost.pricing import Pricing, Shared
from vlstress.cost.profile import arch_cost
from vlstress.errors import VlstressError
from vlstress.suites.overlap.neighbours import AUTO_FLAT_MAX

# planted copies per training image chosen (collection.TRANSFORMS: resized, re-encoded, cropped;
# collection.py imports PIL, so a test holds the two equal), and faiss's IVF training (k-means on
# at most 256 points a list, 10 iterations)
PLANTED_TRANSFORMS = 3
IVF_POINTS_PER_LIST = 256
IVF_ITERATIONS = 10


def search_macs(queries: int, collection: int, width: int, block: Mapping[str, Any]) -> float:
    """Multiply-adds of the nearest-neighbour search: every query against the whole collection
    (exact), or against nprobe of nlist lists after assigning every training row to a list and
    training the lists (IVF)."""
    kind = str(block.get("index") or "auto")
    if kind == "auto":
        kind = "flat" if collection <= AUTO_FLAT_MAX else "ivf"
    if kind == "flat":
        return float(queries) * collection * width
    nlist = min(int(block.get("nlist") or 1), max(collection, 1))
    nprobe = min(int(block.get("nprobe") or 1), nlist)
    trained = min(collection, IVF_POINTS_PER_LIST * nlist) * nlist * width * IVF_ITERATIONS
    assigned = float(collection + queries) * nlist * width
    return trained + assigned + float(queries) * collection * width * nprobe / nlist


def price(pricing: Pricing) -> None:
    plan, rates = pricing.plan, pricing.rates
    block = pricing.block("overlap")
    train = block.get("train") or {}
    detector = str(block.get("detector"))
    entry = (pricing.values.get("models") or {}).get(detector)
    if not isinstance(entry, Mapping):
        raise VlstressError(f"overlap.detector {detector!r} is not a key of models")
    arch = arch_cost(str(entry.get("arch")))
    collection = sizes.collection_size(train, plan.dataset, pricing.project, pricing.given)
    if collection.images is None:
        plan.notes.append(
            f"overlap: the training collection's size is unknown ({collection.source}); its "
            f"embedding and search are not priced: give it with --size {sizes.COLLECTION}=N"
        )
        return
    n = collection.images
    copies = min(int(block.get("planted") or 0), n) * PLANTED_TRANSFORMS
    testsets = pricing.zeroshot_sets()
    names = [str(name) for name in block.get("testsets") or []]
    unknown = [name for name in names if name not in testsets]
    if unknown:
        raise VlstressError(f"overlap.testsets: {', '.join(unknown)} not zero-shot test sets")
    queries = sum(testsets[name].images for name in names)
    embedded = 0 if train.get("kind") == "embeddings" else n
    macs = search_macs(queries + copies, n + copies, arch.embed_dim, block)
    plan.shared.append(
        Shared(
            "overlap detection",
            f"{embedded + copies:,} training images and planted copies embedded by {detector} "
            f"({collection.source}); {queries + copies:,} queries searched in "
            f"{n + copies:,} rows ({macs / 1e12:,.1f} T multiply-adds)",
            cpu_s=copies * rates.image_variant_core_s + macs / rates.search_macs_per_core_s,
            arch=arch.arch,
            image_passes=embedded + copies,
            jobs=1,
            stage="overlap_detect",
        )
    )
