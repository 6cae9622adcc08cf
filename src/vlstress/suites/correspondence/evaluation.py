"""The work of `vlstress evaluate-correspondence`: one model's dense features on every pair of a
set, matched and scored by the set's protocol (Probe3D's evaluation of ScanNet, NAVI or SPair-71k).

Per pair: the two images through the frozen image tower (vlstress.suites.correspondence.features),
the protocol's errors (`protocols`), and how many of its matches (SPair: keypoints) fall within each
threshold. Records: one over all pairs (recall at every threshold, and `recall` at the headline
threshold) and one per rotation bin (SPair: viewpoint-variation bucket) that holds pairs. ScanNet's
and NAVI's recall is the mean of the pairs' recalls; SPair's PCK pools keypoints within a class and
averages the classes (vlstress.suites.correspondence.resampling).
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from vlstress.outcomes import Outcomes
from vlstress.record import Record, assemble
from vlstress.suites.correspondence.catalogue import Threshold, bin_label
from vlstress.suites.correspondence.pairs import KeypointPair, PairList, ViewPair
from vlstress.suites.correspondence.resampling import EACH_PAIR, class_mean_recall, pair_outcomes
from vlstress.suites.correspondence.settings import Protocol

log = logging.getLogger(__name__)
TASK = "correspondence"


@dataclass(frozen=True)
class PairScore:
    """One pair: its matches (SPair: keypoints visible in both) within each threshold."""

    angle: float  # rotation between the views (degrees); SPair: the viewpoint bucket
    group: int  # SPair: the class's index; else EACH_PAIR
    counted: int
    correct: tuple[int, ...]  # per threshold of the protocol, in its order
    # SPair: the samples the pair was drawn in (its bucket, and/or Probe3D's `all` sample of its
    # class); empty: every pair counts in `all` and in its rotation bin
    samples: tuple[str, ...] = ()


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
    counted = len(next(iter(errors.values())))
    correct = tuple(
        int(np.sum(errors[t.unit] < (t.metres if t.unit == "cm" else t.value))) for t in thresholds
    )
    return PairScore(angle, group, counted, correct)


def _recall(scores: Sequence[PairScore], column: int) -> float | None:
    if not scores:
        return None
    value = class_mean_recall(
        np.array([s.correct[column] for s in scores]),
        np.array([s.counted for s in scores]),
        np.array([s.group for s in scores]),
    )
    return None if np.isnan(value) else round(value, 6)


ALL = "all"


def in_all(scores: Sequence[PairScore]) -> list[int]:
    """The pairs of the all-pairs record: every pair, or (SPair) those of Probe3D's `all` sample
    where the pairs say which samples they were drawn in."""
    if any(ALL in s.samples for s in scores):
        return [i for i, s in enumerate(scores) if ALL in s.samples]
    return list(range(len(scores)))


def bins_of(protocol: Protocol, scores: Sequence[PairScore]) -> list[tuple[str, list[int]]]:
    """(label, pair indices) of each bin that holds pairs: rotation bins [lo, hi) (ScanNet, NAVI),
    else the viewpoint buckets (SPair: the pairs drawn in each bucket's sample)."""
    angles = np.array([s.angle for s in scores])
    if protocol.bins is not None:
        edges = protocol.bins
        found = [
            (bin_label(lo, hi), [i for i in range(len(scores)) if lo <= angles[i] < hi])
            for lo, hi in zip(edges[:-1], edges[1:], strict=False)
        ]
    else:
        buckets = sorted({int(b) for b in angles.tolist()})
        found = [
            (
                f"{b}",
                [
                    i
                    for i, s in enumerate(scores)
                    if angles[i] == b and (not s.samples or str(b) in s.samples)
                ],
            )
            for b in buckets
        ]
    return [(label, members) for label, members in found if members]


def records_of(
    name: str,
    protocol: Protocol,
    scores: list[PairScore],
    dataset: dict[str, Any],
    provenance: dict[str, Any],
) -> Evaluated:
    """The records of a set (all pairs, then each bin) and their per-pair outcomes."""
    headline = protocol.thresholds.index(protocol.headline)
    bin_by = "rotation" if protocol.bins is not None else "viewpoint"
    condition = {"set": name, "protocol": protocol.name, "bin_by": bin_by}
    counted = "n_keypoints" if protocol.name == "spair" else "n_matches"

    def one(label: str, members: list[int], every: bool) -> tuple[Record, Outcomes]:
        chosen = [scores[i] for i in members]
        metrics: dict[str, Any] = {
            "recall": _recall(chosen, headline),
            "n_pairs": len(chosen),
            counted: int(sum(s.counted for s in chosen)),
        }
        if every:
            for column, threshold in enumerate(protocol.thresholds):
                metrics[threshold.metric] = _recall(chosen, column)
        record = assemble(
            TASK,
            dataset=dataset,
            condition={**condition, "bin": label, "threshold": threshold_text(protocol.headline)},
            metrics=metrics,
            provenance=provenance,
        )
        recalls = [100.0 * s.correct[headline] / s.counted if s.counted else np.nan for s in chosen]
        outcomes = pair_outcomes(
            np.array(recalls),
            np.array([s.angle for s in chosen]),
            np.array([s.correct[headline] for s in chosen]),
            np.array([s.counted for s in chosen]),
            np.array([s.group for s in chosen]),
        )
        return record, outcomes

    made = [one(ALL, in_all(scores), True)]
    made += [one(label, members, False) for label, members in bins_of(protocol, scores)]
    return Evaluated([r for r, _ in made], [o for _, o in made])


def evaluate(args: argparse.Namespace) -> Evaluated:
    """Load the set, the model's tower, score every pair, assemble the records."""
    from tqdm.auto import tqdm

    from vlstress import provenance
    from vlstress.embedding import models
    from vlstress.embedding.flags import batch_size, model_params, model_spec
    from vlstress.errors import VlstressError
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
    classes = sorted({p.category for p in pair_list.pairs if isinstance(p, KeypointPair)})
    scores = [
        score_pair(tower, pair_list, i, protocol, classes)
        for i in tqdm(range(len(pair_list.pairs)), desc=f"{name} pairs", unit="pair")
    ]
    if any(s.counted == 0 for s in scores):
        empty = [pair_list.pairs[i].pair_id for i, s in enumerate(scores) if s.counted == 0]
        raise VlstressError(
            f"correspondence set {name}: pair(s) {', '.join(empty[:3])} have no match or keypoint "
            "to score (no valid depth, or no keypoint visible in both images)"
        )
    block = provenance.build(
        "evaluate-correspondence",
        {
            **model_params(args, spec),
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
    return records_of(name, protocol, scores, dataset, block)
