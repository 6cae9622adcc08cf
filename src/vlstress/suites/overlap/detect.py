"""The work of `vlstress overlap-detect`: embed the training collection and the planted duplicates
with the detector model, find each test image's nearest training image (faiss), calibrate the
threshold on the planted duplicates (or take the given one) and flag the near-duplicates.

The test images' embeddings are the detector's own zero-shot ones (its `embed_zeroshot` job): the
same bytes the evaluation reads. The result, `detect.json`, holds per test set and image the
nearest training image, its similarity and the flag, and the calibration.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from vlstress.errors import VlstressError
from vlstress.suites.overlap import neighbours


def training_embeddings(collection: dict[str, Any], embed) -> np.ndarray:
    """The collection's embeddings: computed with `embed(paths)`, or read from the given file."""
    if collection["kind"] == "embeddings":
        path = Path(collection["embeddings"])
        if not path.is_file():
            raise VlstressError(f"training embeddings not found: {path}")
        array = np.load(path)
        if array.ndim != 2 or len(array) == 0:
            raise VlstressError(f"training embeddings {path}: expected a non-empty N x D array")
        norms = np.linalg.norm(array, axis=1)
        if not np.allclose(norms, 1.0, atol=1e-3):
            raise VlstressError(
                f"training embeddings {path} are not L2-normalised (norms "
                f"{norms.min():.3f}..{norms.max():.3f}): cosine similarity needs unit vectors"
            )
        return array.astype(np.float32)
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
    train = training_embeddings(collection, embed)
    dims = {name: array.shape[1] for name, array in testsets.items()}
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
        sims, rows = neighbours.nearest(index, planted)
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
        sims, rows = neighbours.nearest(index, queries)
        sets[name] = {
            "similarity": [round(float(s), 6) for s in sims],
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
