"""The text pass of the suite: every (class, template) prompt of a test set embedded once,
L2-normalised, kept per template (classes x templates x dim, float32).

The zero-shot classifier (`vlstress.suites.zeroshot.classifier.build`) is the normalised mean of
exactly these rows over the templates (`classifier.prompt_rows`, the same trimmed text pass);
here they are kept apart, so that any subset of templates (the ablation) and any per-image
weighting (AutoCLIP) costs no further text pass.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np


def per_template(
    model,
    tokenizer,
    classnames: list[str],
    templates: list[str],
    *,
    device: str,
    precision: str = "fp32",
) -> np.ndarray:
    """(classes x templates x dim) float32, each row L2-normalised: the classifier's own text pass
    (`vlstress.suites.zeroshot.classifier.prompt_rows`)."""
    from vlstress.suites.zeroshot.classifier import prompt_rows

    return prompt_rows(model, tokenizer, classnames, templates, device=device, precision=precision)


def average(per_template_rows: np.ndarray, chosen: list[int] | None = None) -> np.ndarray:
    """The zero-shot classifier of the `chosen` templates (all: None): the normalised mean of their
    rows, classes x dim (float64)."""
    from vlstress.suites.zeroshot.classifier import mean_of_rows

    rows = np.asarray(per_template_rows, dtype=np.float64)
    return mean_of_rows(rows if chosen is None else rows[:, chosen])


def load(path: Path, classes: list[str]) -> tuple[np.ndarray, dict[str, Any]]:
    """(classes x templates x dim embeddings, sidecar) of a test set's per-template file, built for
    exactly `classes` (in order)."""
    from vlstress.embedding.files import model_block
    from vlstress.errors import VlstressError
    from vlstress.io import read_json, sidecar

    path = Path(path)
    if not path.is_file():
        raise VlstressError(
            f"per-template text embeddings not found: {path}; run `vlstress embed-zeroshot "
            "--sets classifiers` with the prompts suite on (vlstress.suites.prompts.sets)"
        )
    meta = read_json(sidecar(path), "per-template embeddings sidecar")
    if meta.get("classes") != list(classes):
        raise VlstressError(
            f"per-template embeddings {path} were built for other class names than the test set; "
            "rebuild them"
        )
    rows = np.load(path, allow_pickle=False)
    if rows.ndim != 3 or rows.shape[:2] != (len(classes), len(meta.get("templates", []))):
        raise VlstressError(
            f"per-template embeddings {path}: shape {rows.shape} for {len(classes)} classes and "
            f"{len(meta.get('templates', []))} templates"
        )
    model_block(path, meta)
    return rows, meta
