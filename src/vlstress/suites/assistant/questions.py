"""The multiple-choice questions of a test set: for each image, the true class and the classes a
classifier confused it with most (its highest-scoring wrong classes), in a seeded order, lettered
A, B, ... (ImageNet-D's VQA protocol, as the holistic CLIP paper asks LLaVA).

The questions file (`vlstress assistant-options`) is what every model answers, so an assistant and
a classifier are scored on exactly the same options:

    {"kind": "multiple-choice-questions", "format": "letters", "testset": ..., "classes": [...],
     "n_options": 4, "seed": 0, "options_from": {model block}, "root": ...,
     "questions": [{"path": "...", "label": 3, "options": [7, 3, 0, 5], "answer": "B"}, ...],
     "provenance": {...}}
"""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any

import numpy as np

from vlstress.errors import VlstressError
from vlstress.io import read_json
from vlstress.suites.assistant.names import FORMATS

LETTERS = string.ascii_uppercase
KIND = "multiple-choice-questions"


def draw_options(
    scores: np.ndarray, labels: list[int], n_options: int, seed: int, truth_first: bool = False
) -> np.ndarray:
    """(images x n_options) class indices: each row the true class and the n_options-1 classes of
    highest score besides it (ties: the lower class index first), shuffled by a generator seeded
    with (seed, row), so that a row's order does not depend on the other rows; or, `truth_first`,
    the true class first and the confusions by score (ImageNet-D's order)."""
    n_images, n_classes = scores.shape
    if not 2 <= n_options <= min(n_classes, len(LETTERS)):
        raise VlstressError(
            f"{n_options} options need at least as many classes (the test set has {n_classes}) "
            f"and at most {len(LETTERS)} letters"
        )
    if len(labels) != n_images:
        raise VlstressError(f"{len(labels)} labels for {n_images} rows of scores")
    rows = np.empty((n_images, n_options), dtype=np.int64)
    for i, label in enumerate(labels):
        wrong = np.delete(np.arange(n_classes), label)
        # stable sort of the negated scores: equal scores keep the lower class first
        confused = wrong[np.argsort(-scores[i, wrong], kind="stable")[: n_options - 1]]
        options = np.concatenate([[label], confused])
        rows[i] = options if truth_first else np.random.default_rng([seed, i]).permutation(options)
    return rows


def questions_block(images: list[dict[str, Any]], options: np.ndarray) -> list[dict[str, Any]]:
    """One entry per image: its path and label, its options and the letter of the true class."""
    return [
        {
            "path": entry["path"],
            "label": int(entry["label"]),
            "options": [int(c) for c in row],
            "answer": LETTERS[list(row).index(entry["label"])],
        }
        for entry, row in zip(images, options)
    ]


def load(path: Path) -> dict[str, Any]:
    """A questions file, checked: every option a class, the answer the true class's letter."""
    data = read_json(Path(path), "multiple-choice questions")
    if not isinstance(data, dict) or data.get("kind") != KIND or data.get("format") not in FORMATS:
        raise VlstressError(f"{path}: not a questions file (run `vlstress assistant-options`)")
    classes = data.get("classes") or []
    for i, item in enumerate(data.get("questions") or []):
        options = item.get("options") or []
        if (
            len(options) != data.get("n_options")
            or any(not 0 <= c < len(classes) for c in options)
            or item.get("label") not in options
            or item.get("answer") != LETTERS[options.index(item.get("label"))]
        ):
            raise VlstressError(f"{path}: question {i} ({item.get('path')}) is malformed")
    if not data.get("questions"):
        raise VlstressError(f"{path}: no questions")
    return data
