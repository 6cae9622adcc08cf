"""The work of `vlstress overlap-detect`: embed the training collection and the planted duplicates
with the detector model, find each test image's nearest training image (faiss), calibrate the
threshold on the planted duplicates (or take the given one) and flag the near-duplicates.

The test images' embeddings are the detector's own zero-shot ones (its `embed_zeroshot` job): the
same bytes the evaluation reads. The result, `detect.json`, holds per test set and image the
nearest training image, its similarity and the flag, and the calibration. Similarities are exact
cosines of the embeddings rounded to 5 decimals, the same on every CPU, and the threshold is one of
them (or the given one): `vlstress.suites.overlap.neighbours` says why.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from vlstress.errors import VlstressError
from vlstress.suites.overlap import embedding_file, neighbours


def training_embeddings(collection: dict[str, Any], embed, width: int | None = None) -> np.ndarray:
    """The collection's embeddings: computed with `embed(paths)`, or read from the given file
    (checked: `embedding_file.load`, of `width` columns when given)."""
    if collection["kind"] == "embeddings":
        return embedding_file.load(Path(collection["embeddings"]), width)
    if not collection["images"]:
        raise VlstressError("the training collection has no images")
    return embed([Path(p) for p in collection["images"]])


def detect(
    collection: dict[str, Any],
    embed,
    testsets: dict[str, np.ndarray],
    *,
    index_kind: str,
    nlist: int,
    nprobe: int,
    threshold: float | None,
    recall: float,
    seed: int,
) -> dict[str, Any]:
    """Flags per test set (name -> its detector embeddings), and the calibration."""
    dims = {name: array.shape[1] for name, array in testsets.items()}
    if len(set(dims.values())) > 1:
        raise VlstressError(f"the test sets' embeddings have different widths: {dims}")
    train = training_embeddings(collection, embed, next(iter(dims.values()), None))
    wrong = {name: d for name, d in dims.items() if d != train.shape[1]}
    if wrong:
        raise VlstressError(
            f"training embeddings have {train.shape[1]} dimensions, test sets {wrong}: "
            "not the detector's embeddings"
        )
    index, kind = neighbours.build_index(train, index_kind, nlist=nlist, nprobe=nprobe, seed=seed)
    calibration = None
    if collection["planted"]:
        planted = embed([Path(p["path"]) for p in collection["planted"]])
        sims, rows = neighbours.nearest(index, planted, train)
        calibration = neighbours.calibrate(
            sims,
            rows,
            np.array([p["original"] for p in collection["planted"]]),
            [p["transform"] for p in collection["planted"]],
            recall,
        )
    given = threshold is not None
    if threshold is None:
        if calibration is None:
            raise VlstressError("no threshold given and no planted duplicates to calibrate one")
        threshold = calibration.threshold
    sets = {}
    for name, queries in testsets.items():
        # rounded to neighbours.DECIMALS: the written similarity against the written threshold
        sims, rows = neighbours.nearest(index, queries, train)
        sets[name] = {
            "similarity": [float(s) for s in sims],
            "nearest": [int(r) for r in rows],
            "flagged": [bool(s >= threshold) for s in sims],
        }
    return {
        "threshold": float(threshold),
        "threshold_from": "params" if given else "planted duplicates",
        "calibration": None if calibration is None else calibration.__dict__,
        "index": kind,
        "n_train": int(len(train)),
        "testsets": sets,
    }
