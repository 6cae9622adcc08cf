"""Pricing: each model's image tower runs on both images of every pair at the protocol's size (a
forward pass at H x W costs about H*W / 224^2 passes at 224 px; matching is small beside it).

The pairs of a set are counted in its built pair list (`data/correspondence/<set>/pairs.json`),
else given (`vlstress cost --size <set>=N`), else known for the fixed releases (ScanNet-1500:
1,500; SPair-71k: up to `pairs` per class and viewpoint bucket, 18 classes, three buckets and
Probe3D's `all` sample; with `pairs` null, the split's pairs); a NAVI set must be built or given:
its pair count depends on the release's in-the-wild views."""

from __future__ import annotations

import json
from pathlib import Path

from vlstress.cost.pricing import Pricing, Work
from vlstress.errors import VlstressError

SCANNET_PAIRS = 1500
# the synthetic spair-71k layout: pairs per viewpoint bucket of each of its classes (a copy of what
# synthetic.write_spair renders: its module imports Pillow; a test holds the two equal)
SYNTHETIC_SPAIR_BUCKETS = (2, 3, 1)
SYNTHETIC_SPAIR_CLASSES = 2
SPAIR_CLASSES = 18
SPAIR_SAMPLES = 4  # viewpoint buckets 0, 1, 2 and Probe3D's sample of all pairs
SPAIR_SPLITS = {"trn": 53_340, "val": 5_384, "test": 12_234}  # pairs per split (Min et al., 2019)
REFERENCE_SIDE = 224


def pairs_of(pricing: Pricing, name: str, entry: dict) -> tuple[int, str]:
    """(pairs, where the number comes from) of one set."""
    built = Path(pricing.project) / "data" / "correspondence" / name / "pairs.json"
    if built.is_file():
        return len(json.loads(built.read_text())["pairs"]), "pair list"
    if name in pricing.given:
        return int(pricing.given[name]), "given (--size)"
    kind = entry.get("kind")
    if kind == "synthetic-scannet":
        return int(entry["pairs"]), "params"
    if kind == "synthetic-spair":
        cap = int(entry["pairs"])
        per_class = sum(min(cap, n) for n in SYNTHETIC_SPAIR_BUCKETS)
        return SYNTHETIC_SPAIR_CLASSES * per_class, "rendered"
    if kind == "scannet-1500":
        return SCANNET_PAIRS, "ScanNet-1500"
    if kind == "spair-71k" and entry.get("pairs"):
        return SPAIR_CLASSES * SPAIR_SAMPLES * int(entry["pairs"]), "upper bound"
    if kind == "spair-71k" and entry.get("split") in SPAIR_SPLITS:
        return SPAIR_SPLITS[entry["split"]], f"SPair-71k {entry['split']} split"
    raise VlstressError(
        f"correspondence.sets.{name}: the number of pairs of a {kind} set is known once its pair "
        f"list is built (`vlstress correspondence-pairs`); or give it: --size {name}=N"
    )


def pixels_per_image(entry: dict) -> float:
    """The protocol's image size as 224-px passes."""
    sides = [int(v) for v in str(entry.get("image_size") or REFERENCE_SIDE).split(",")]
    height, width = (sides[0], sides[0]) if len(sides) == 1 else (sides[0], sides[1])
    return height * width / REFERENCE_SIDE**2


def price(pricing: Pricing) -> None:
    sets = pricing.block("correspondence").get("sets") or {}
    passes, parts = 0.0, []
    weights: dict[str, float] = {}
    for name, entry in sorted(sets.items()):
        pairs, source = pairs_of(pricing, name, entry)
        weights[str(name)] = 2 * pairs * pixels_per_image(entry)
        passes += weights[str(name)]
        parts.append(f"{name}: {pairs:,} pairs ({source})")
    pricing.plan.work.append(
        Work(
            "correspondence",
            "; ".join(parts) + " x 2 images at the protocol's size",
            passes=passes,
            jobs=len(sets),
            stage="evaluate_correspondence",
            weights=weights,
        )
    )
