"""pm-k accuracy (Shankar, Dave et al. 2021), as the imagenet-testbed scores ImageNet-Vid-Robust
(`src/eval_settings/imagenet_vid_robust.py` lines 41-64): a frame is correct when its top-1 is one
of the frame's own labels; pm-0 is the share of anchors classified correctly; pm-k the share of
anchors that are correct and whose every neighbour within k frames is correct too. Pure NumPy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from vlstress.errors import VlstressError
from vlstress.outcomes import Outcomes


def anchor_states(
    entries: Sequence[dict[str, Any]], predicted: Sequence[int]
) -> tuple[np.ndarray, np.ndarray]:
    """Per anchor (in order of first appearance): whether its own frame is right, and the smallest
    distance of a wrong neighbour (inf where every neighbour is right)."""
    if len(entries) != len(predicted):
        raise VlstressError(f"{len(predicted)} predictions for {len(entries)} frames")
    anchors: dict[str, dict[str, Any]] = {}
    for entry, top1 in zip(entries, predicted):
        state = anchors.setdefault(entry["anchor"], {"anchor": None, "first_wrong": np.inf})
        right = int(top1) in {int(label) for label in entry["labels"]}
        offset = abs(int(entry["offset"]))
        if offset == 0:
            state["anchor"] = right
        elif not right:
            state["first_wrong"] = min(state["first_wrong"], offset)
    headless = [name for name, state in anchors.items() if state["anchor"] is None]
    if headless:
        raise VlstressError(
            f"{len(headless)} anchor(s) without their own frame, e.g. {headless[0]}"
        )
    if not anchors:
        raise VlstressError("no anchors to score")
    own = np.array([bool(s["anchor"]) for s in anchors.values()])
    first_wrong = np.array([float(s["first_wrong"]) for s in anchors.values()])
    return own, first_wrong


def anchor_outcomes(
    entries: Sequence[dict[str, Any]], predicted: Sequence[int], k_max: int
) -> Outcomes:
    """Per anchor, `pm0` .. `pm<k_max>`: whether it counts for pm-k (right, and every neighbour
    within k frames right too), so a pm-k is the mean of its column."""
    right, first_wrong = anchor_states(entries, predicted)
    return Outcomes("anchor", {f"pm{k}": right & (first_wrong > k) for k in range(k_max + 1)})


def pm_k(entries: Sequence[dict[str, Any]], predicted: Sequence[int], k_max: int) -> list[float]:
    """[pm-0, ..., pm-k_max] in % over the anchors of `entries` (each with `anchor`, `offset`,
    `labels`), given each entry's top-1."""
    found = anchor_outcomes(entries, predicted, k_max)
    return [100.0 * float(np.mean(found.column(f"pm{k}"))) for k in range(k_max + 1)]
