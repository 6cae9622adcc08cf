"""mFR and mT5D as the paper normalises them: by AlexNet's published flip probability and top-5
distance per perturbation (Hendrycks & Dietterich 2019), beside the run's own baseline model.

AlexNet's values would ship as `vlstress/data/published/alexnet_imagenet_p.csv` (columns
perturbation, difficulty, flip_probability, top5_distance; FP in %), with their source in SOURCES.md
there. No public file found holds them (SOURCES.md says what was searched), so none ships and
`alexnet_values` returns None: the table then says so instead of a number. Dropping a checked file
there is all it takes to fill the columns.

Comparable only when the run measures what AlexNet's numbers measure (`comparability`): frames of
ImageNet val (condition `images`: `imagenet`, generated or the released ImageNet-P videos), the
paper's 10 test perturbations, at a difficulty the published values have.
"""

from __future__ import annotations

import csv
import io
from importlib import resources

from vlstress.suites.stability.perturbations import TEST

ALEXNET_FILE = "data/published/alexnet_imagenet_p.csv"
IMAGES_KEY = "images"  # condition key: the kind of the test set the frames come from
COMPARABLE_IMAGES = ("imagenet",)
NOT_SHIPPED = (
    "AlexNet's published ImageNet-P flip probabilities and top-5 distances are not shipped (no "
    "checkable public source found; vlstress/data/published/SOURCES.md)"
)


def alexnet_values(text: str | None = None) -> dict[tuple[str, int], tuple[float, float]] | None:
    """(perturbation, difficulty) -> (FP in %, T5D) of AlexNet, from the shipped file (or `text`,
    its contents); None when none is shipped."""
    if text is None:
        path = resources.files("vlstress").joinpath(ALEXNET_FILE)
        if not path.is_file():
            return None
        text = path.read_text(encoding="utf-8")
    return {
        (row["perturbation"], int(row["difficulty"])): (
            float(row["flip_probability"]),
            float(row["top5_distance"]),
        )
        for row in csv.DictReader(io.StringIO(text))
    }


def comparability(
    perturbations: list[str],
    images: list[object],
    difficulties: list[int],
    published: dict[tuple[str, int], tuple[float, float]] | None,
) -> str | None:
    """Why the run's stability records do not compare with AlexNet's published values ("not
    comparable: ..." or the values are not shipped), None when they do. `images`: the `images`
    condition of each record (None where a record does not say)."""
    reasons = []
    if any(not isinstance(kind, str) for kind in images):
        reasons.append("the records do not say which images the sequences perturb")
    other = sorted({k for k in images if isinstance(k, str) and k not in COMPARABLE_IMAGES})
    if other:
        reasons.append(
            f"sequences of a {', '.join(other)} set, not of ImageNet val (kind imagenet)"
        )
    missing = [p for p in TEST if p not in perturbations]
    if missing:
        reasons.append(
            f"{len(TEST) - len(missing)} of the 10 ImageNet-P test perturbations (missing: "
            f"{', '.join(missing)})"
        )
    if reasons:
        return "not comparable: " + "; ".join(reasons)
    if published is None:
        return NOT_SHIPPED
    lacking = sorted({d for d in difficulties for p in TEST if (p, d) not in published})
    if lacking:
        return (
            "not comparable: AlexNet's published values have no difficulty "
            f"{', '.join(map(str, lacking))}"
        )
    return None


def alexnet_relative(
    values: dict[str, float], difficulty: int, published: dict, column: int
) -> float | None:
    """Mean over the 10 test perturbations of value / AlexNet's (`column` 0: FP, 1: T5D), in %;
    None where an AlexNet value is 0 (a ratio to 0 is undefined)."""
    bases = [published[(p, difficulty)][column] for p in TEST]
    if any(base == 0 for base in bases):
        return None
    return 100.0 * sum(values[p] / base for p, base in zip(TEST, bases)) / len(TEST)


def cell_text(reason: str) -> str:
    """What an AlexNet column's cell says instead of a number."""
    return "not comparable" if reason.startswith("not comparable") else "not shipped"
