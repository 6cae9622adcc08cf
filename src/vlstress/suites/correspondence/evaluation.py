"""The work of `vlstress evaluate-correspondence`: one model's dense features on every pair of a
set, matched and scored by the set's protocol (Probe3D's evaluation of ScanNet, NAVI or SPair-71k).

Per pair: the two images through the frozen image tower (vlstress.suites.correspondence.features),
the protocol's errors (`protocols`), and how many of its matches (SPair: keypoints) fall within each
threshold. Records: one over all pairs (recall at every threshold, and `recall` at the headline
threshold) and one per rotation bin (SPair: viewpoint-variation bucket) that holds pairs, scored as
Probe3D scores them (`scores`): ScanNet's and NAVI's recall over every match, a bin's the mean of
its pairs' recalls (every pair keeps the same number of matches: checked); SPair's PCK pools
keypoints within a class and averages the classes.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from vlstress.errors import VlstressError
from vlstress.outcomes import Outcomes
from vlstress.record import Record, assemble
from vlstress.suites.correspondence import scores
from vlstress.suites.correspondence.catalogue import Threshold, bin_label
from vlstress.suites.correspondence.pairs import KeypointPair, PairList, ViewPair
from vlstress.suites.correspondence.resampling import EACH_PAIR, pair_outcomes
from vlstress.suites.correspondence.settings import Protocol

log = logging.getLogger(__name__)
TASK = "correspondence"


@dataclass(frozen=True)
class PairScore:
    """One pair's errors (per unit: px, cm, box) of its matches, or of its keypoints visible in
    both images (SPair)."""

    angle: float  # rotation between the views (degrees); SPair: the viewpoint bucket
    group: int  # SPair: the class's index; else EACH_PAIR
    errors: dict[str, np.ndarray]
    # SPair: the samples the pair was drawn in (its bucket, and/or Probe3D's `all` sample of its
    # class); empty: every pair counts in `all` and in its rotation bin
    samples: tuple[str, ...] = ()

    def counted(self, threshold: Threshold) -> int:
        return int(len(self.errors[threshold.unit]))

    def correct(self, threshold: Threshold) -> int:
        return int(np.sum(self.errors[threshold.unit] < limit(threshold)))


def limit(threshold: Threshold) -> float:
    """The threshold in the unit of the errors (metres for cm)."""
    return threshold.metres if threshold.unit == "cm" else threshold.value


@dataclass(frozen=True)
class Evaluated:
    records: list[Record]
    outcomes: list[Outcomes]


def threshold_text(threshold: Threshold) -> str:
    return f"{threshold.value:g}{threshold.unit}"


def score_pair(tower, pair_list: PairList, index: int, protocol: Protocol, classes: list[str]):
    """The PairScore of pair `index` (the tower's features, the protocol's errors)."""
    pair = pair_list.pairs[index]
    root = Path(pair_list.header.root)
    if protocol.name in ("scannet", "navi") and isinstance(pair, ViewPair):
        read = _scannet_errors if protocol.name == "scannet" else _navi_errors
        found = read(tower, pair, root, protocol)
        return _score(found, protocol.thresholds, pair.rotation_deg, EACH_PAIR)
    if protocol.name == "spair" and isinstance(pair, KeypointPair):
        found = _spair_errors(tower, pair, root, protocol)
        group = classes.index(pair.category)
        score = _score(found, protocol.thresholds, float(pair.viewpoint_variation), group)
        return replace(score, samples=pair.drawn_in)
    raise ValueError(
        f"pair {index} of a {protocol.kind} set does not fit the {protocol.name} protocol"
    )


def _matching(protocol: Protocol) -> tuple[int, float]:
    if protocol.matches is None or protocol.scale_factor is None:  # settings.build refuses it
        raise ValueError(f"the {protocol.name} protocol needs matches and scale_factor")
    return protocol.matches, protocol.scale_factor


def _scannet_errors(tower, pair: ViewPair, root: Path, protocol: Protocol) -> dict[str, np.ndarray]:
    import torch

    from vlstress.suites.correspondence import loading, protocols

    matches, scale = _matching(protocol)
    data = loading.scannet_pair(pair, root, protocol.image_size, protocol.mean, protocol.std)
    feats = tower(torch.stack(data.images))
    errors = protocols.scannet_errors(
        feats[0], feats[1], data.depths[0], data.depths[1], data.K, data.Rt_01,
        num_corr=matches, scale_factor=scale,
    )  # fmt: skip
    return {"px": errors.cpu().numpy()}


def _navi_errors(tower, pair: ViewPair, root: Path, protocol: Protocol) -> dict[str, np.ndarray]:
    import torch

    from vlstress.suites.correspondence import loading, protocols

    matches, scale = _matching(protocol)
    data = loading.navi_pair(pair, root, protocol.image_size[0], protocol.mean, protocol.std)
    feats = tower(torch.stack([view.image for view in data.views]))
    err3d, err2d = protocols.navi_errors(
        feats[0], feats[1], data.views[0].xyz, data.views[1].xyz, data.Rt_01,
        data.views[1].K, num_corr=matches, scale_factor=scale,
    )  # fmt: skip
    return {"cm": err3d.cpu().numpy(), "px": err2d.cpu().numpy()}


def _spair_errors(
    tower, pair: KeypointPair, root: Path, protocol: Protocol
) -> dict[str, np.ndarray]:
    import torch

    from vlstress.suites.correspondence import loading, protocols

    size = protocol.image_size[0]
    data = loading.spair_pair(pair, root, size, protocol.mean, protocol.std)
    feats = tower(torch.stack(data.images))
    errors = protocols.spair_errors(
        feats[0], feats[1], data.kps(0), data.kps(1), data.threshold_scale, size
    )
    return {"box": errors.cpu().numpy()}


def _score(
    errors: dict[str, np.ndarray], thresholds: Sequence[Threshold], angle: float, group: int
) -> PairScore:
    units = {t.unit for t in thresholds}
    return PairScore(angle, group, {unit: np.asarray(errors[unit], np.float64) for unit in units})


ALL = "all"


def in_all(found: Sequence[PairScore]) -> list[int]:
    """The pairs of the all-pairs record: every pair, or (SPair) those of Probe3D's `all` sample
    where the pairs say which samples they were drawn in."""
    if any(ALL in s.samples for s in found):
        return [i for i, s in enumerate(found) if ALL in s.samples]
    return list(range(len(found)))


def bins_of(protocol: Protocol, found: Sequence[PairScore]) -> list[tuple[str, list[int]]]:
    """(label, pair indices) of each bin that holds pairs: rotation bins [lo, hi) (ScanNet, NAVI),
    else the viewpoint buckets (SPair: the pairs drawn in each bucket's sample)."""
    angles = np.array([s.angle for s in found])
    if protocol.bins is not None:
        edges = protocol.bins
        bins = [
            (bin_label(lo, hi), [i for i in range(len(found)) if lo <= angles[i] < hi])
            for lo, hi in zip(edges[:-1], edges[1:], strict=False)
        ]
    else:
        bins = [
            (
                f"{b}",
                [
                    i
                    for i, s in enumerate(found)
                    if angles[i] == b and (not s.samples or str(b) in s.samples)
                ],
            )
            for b in sorted({int(b) for b in angles.tolist()})
        ]
    return [(label, members) for label, members in bins if members]


def set_recall(protocol: Protocol, chosen: Sequence[PairScore], threshold: Threshold) -> float:
    """Probe3D's recall (%) of a set of pairs: over every match of every pair (ScanNet, NAVI), or
    per class over its keypoints, then the mean over classes (SPair)."""
    if protocol.name == "spair":
        keyed: dict[tuple[str, str], list[np.ndarray]] = {}
        for score in chosen:
            keyed.setdefault((str(score.group), "set"), []).append(score.errors[threshold.unit])
        recalls = scores.bucket_recalls(
            {key: np.concatenate(parts) for key, parts in keyed.items()}, limit(threshold)
        )
        return scores.mean_over_classes(recalls, ["set"])["set"]
    errors = np.concatenate([score.errors[threshold.unit] for score in chosen])
    return scores.recall(errors, [limit(threshold)])[0]


def bin_recall(protocol: Protocol, chosen: Sequence[PairScore]) -> float:
    """A rotation bin's recall (%): the mean of its pairs' recalls at the binned threshold
    (Probe3D's compute_binned_performance); SPair's buckets as its sets."""
    if protocol.name == "spair":
        return set_recall(protocol, chosen, protocol.headline)
    threshold = protocol.headline
    per_pair = scores.per_pair_recall([s.errors[threshold.unit] for s in chosen], limit(threshold))
    return float(np.mean(per_pair))


def _rounded(value: float) -> float | None:
    return None if np.isnan(value) else round(float(value), 6)


def records_of(
    name: str,
    protocol: Protocol,
    found: list[PairScore],
    dataset: dict[str, Any],
    provenance: dict[str, Any],
) -> Evaluated:
    """The records of a set (all pairs, then each bin) and their per-pair outcomes."""
    headline = protocol.headline
    bin_by = "rotation" if protocol.bins is not None else "viewpoint"
    condition = {"set": name, "protocol": protocol.name, "bin_by": bin_by}
    counted = "n_keypoints" if protocol.name == "spair" else "n_matches"

    def one(label: str, members: list[int]) -> tuple[Record, Outcomes]:
        chosen = [found[i] for i in members]
        every = label == ALL
        value = set_recall(protocol, chosen, headline) if every else bin_recall(protocol, chosen)
        metrics: dict[str, Any] = {
            "recall": _rounded(value),
            "n_pairs": len(chosen),
            counted: int(sum(s.counted(headline) for s in chosen)),
        }
        if every:
            for threshold in protocol.thresholds:
                metrics[threshold.metric] = _rounded(set_recall(protocol, chosen, threshold))
        record = assemble(
            TASK,
            dataset=dataset,
            condition={**condition, "bin": label, "threshold": threshold_text(headline)},
            metrics=metrics,
            provenance=provenance,
        )
        correct = np.array([s.correct(headline) for s in chosen])
        total = np.array([s.counted(headline) for s in chosen])
        outcomes = pair_outcomes(
            100.0 * correct / np.maximum(total, 1),
            np.array([s.angle for s in chosen]),
            correct,
            total,
            np.array([s.group for s in chosen]),
        )
        return record, outcomes

    made = [one(ALL, in_all(found))]
    made += [one(label, members) for label, members in bins_of(protocol, found)]
    return Evaluated([r for r, _ in made], [o for _, o in made])


def check_counts(name: str, protocol: Protocol, found: list[PairScore], pair_ids: list[str]):
    """Every pair scored something, and (ScanNet, NAVI) every pair kept the same number of matches:
    Probe3D's recall over every match is then the mean of the pairs' recalls, as the intervals
    resample it (Probe3D's own evaluation stacks the pairs' errors and needs it too)."""
    counts = [s.counted(protocol.headline) for s in found]
    empty = [pair_ids[i] for i, n in enumerate(counts) if n == 0]
    if empty:
        raise VlstressError(
            f"correspondence set {name}: pair(s) {', '.join(empty[:3])} have no match or keypoint "
            "to score (no valid depth, or no keypoint visible in both images)"
        )
    if protocol.name != "spair" and len(set(counts)) > 1:
        fewest = min(range(len(counts)), key=counts.__getitem__)
        raise VlstressError(
            f"correspondence set {name}: pair {pair_ids[fewest]} keeps {counts[fewest]} matches, "
            f"others {max(counts)}: it has fewer points with depth at scale_factor "
            f"{protocol.scale_factor} than `matches` ({protocol.matches}); lower `matches` so "
            "every pair keeps as many"
        )


def evaluate(args: argparse.Namespace) -> Evaluated:
    """Load the set, the model's tower, score every pair, assemble the records."""
    from tqdm.auto import tqdm

    from vlstress import provenance
    from vlstress.embedding import models, precision
    from vlstress.embedding.flags import batch_size, model_params, model_spec
    from vlstress.io import sha256_file
    from vlstress.suites.correspondence import pairs, settings
    from vlstress.suites.correspondence.features import DenseTower

    name, protocol = settings.read(args.pairs)
    pairs_file = Path(args.pairs) / "pairs.json"
    pair_list = pairs.read(pairs_file)
    if pair_list.header.kind not in (
        protocol.kind,
        protocol.kind.removeprefix("synthetic-"),
    ) and not (protocol.kind.startswith("synthetic-") and pair_list.header.synthetic):
        raise VlstressError(
            f"{pairs_file}: pairs of kind {pair_list.header.kind}, protocol {protocol.kind}"
        )
    spec = model_spec(args)
    device = models.resolve_device(args.device)
    model, _, _ = models.load(spec, device, threads=args.threads)
    described = models.describe(spec, model)
    tower = DenseTower(model, spec.arch, device, batch_size(args, device))
    autocast = precision.autocast(args.precision, device)  # refuses amp off CUDA

    def read(images):  # amp: the tower's forward autocast, features matched in float32
        with autocast:
            return tower(images).float()

    classes = sorted({p.category for p in pair_list.pairs if isinstance(p, KeypointPair)})
    found = []
    for i in tqdm(range(len(pair_list.pairs)), desc=f"{name} pairs", unit="pair"):
        try:
            found.append(score_pair(read, pair_list, i, protocol, classes))
        except (VlstressError, ValueError, RuntimeError) as error:
            pair_id = pair_list.pairs[i].pair_id
            raise VlstressError(f"correspondence set {name}, pair {pair_id}: {error}") from error
    check_counts(name, protocol, found, [pair.pair_id for pair in pair_list.pairs])
    block = provenance.build(
        "evaluate-correspondence",
        {
            # the images are decoded here by Pillow, whatever --decoder says
            **model_params(args, spec, decoder="pil"),
            "set": name,
            "protocol": protocol.to_json(),
            "features": tower.readout.as_dict(),
            "pairs": {
                "kind": pair_list.header.kind,
                "sampling": pair_list.header.sampling,
                "seed": pair_list.header.seed,
                "synthetic": pair_list.header.synthetic,
            },
        },  # fmt: skip
        seed=spec.seed,
        model=described,
        device=device,
        inputs={
            str(path): sha256_file(path) for path in (pairs_file, Path(args.pairs) / settings.FILE)
        },
    )
    images = {path for pair in pair_list.pairs for path in pair.images}
    dataset = {
        "name": name,
        "kind": protocol.kind,
        "n_images": len(images),
        "synthetic": pair_list.header.synthetic,
    }
    return records_of(name, protocol, found, dataset, block)
