"""The line each shift of a run is placed against (`vlstress robustness`), and the placement.

Effective robustness (ER) is a model's height above the line of baseline models
(vlstress.suites.zeroshot.robustness). Which baselines, per shift:

- `testbed` (the default, `zeroshot.robustness.baselines`): the 85 ImageNet-trained models of
  imagenet-testbed shipped with vlstress (`data/published/testbed_standard.csv`, SOURCES.md
  there), the line of Taori et al. 2020 and Miller et al. 2021. It exists only where the run's
  in-distribution set is of kind `imagenet` and the shift's kind has a testbed column
  (`TESTBED_COLUMNS`): ImageNet-V2, -R, -Sketch, -A, ObjectNet. The testbed's ImageNet-R and -A
  accuracies are on their 200 classes and ObjectNet's on its 113, as the run's sets of these kinds
  score (vlstress.testsets.folder_kinds), and ObjectNet's images lose the same 2-pixel border
  before preprocessing (`source.border_crop_px`, vlstress.embedding.encoders.BorderCropped).
  Its band: the percentile bootstrap over the baseline models (`robustness.bootstrap_band`), and
  each model's ER gets the same interval.
- a CSV file of the same layout (one row per model; percent; columns `model`, `imagenet1k` and any
  of the testbed's shift columns; an empty cell = no accuracy): the same, over its models.
- `run`: the line fitted over this run's own models (at least two), as the only choice for a shift
  without a published line: the mean over corruptions, the typographic attack, a set of another
  kind (CIFAR, COCO objects, the demo's objects), or any shift when the in-distribution set is not
  ImageNet.

No shift falls back silently: every row and panel names its line (`ShiftLine.text`: "testbed: 85
ImageNet-trained models", "run's 6 models (no testbed line for demo-objects)").

Units: accuracies are fractions in [0, 1]; the `*_pp` columns are percentage points.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from vlstress.errors import VlstressError
from vlstress.report.intervals import MIN_BOOTSTRAP_ITEMS
from vlstress.suites.zeroshot import robustness
from vlstress.suites.zeroshot.baselines import TESTBED, published_path

RUN = "run"
ID_KIND = "imagenet"  # the testbed's in-distribution set: ImageNet val
ID_COLUMN = "imagenet1k"
# a test-set kind (vlstress.testsets.kinds) -> its column in the testbed table
TESTBED_COLUMNS = {
    "imagenet-v2": "imagenetv2",
    "imagenet-r": "imagenet-r",
    "imagenet-sketch": "imagenet_sketch",
    "imagenet-a": "imagenet-a",
    "objectnet": "objectnet",
}
SCALE = 100  # the shipped testbed table, and a CSV given as baselines, hold percent
GRID_POINTS = 101  # of the band drawn in the figure
CONFIDENCE = 0.95
LINE_COLUMNS = ["line_source", "line"]
INTERVAL_COLUMNS = ["effective_robustness_low_pp", "effective_robustness_high_pp"]


@dataclass(frozen=True)
class Reference:
    """Published baselines: one row per (model, testbed column) with both accuracies (fractions)."""

    name: str  # `testbed`, or the CSV's file name
    path: Path
    long: pd.DataFrame  # model, shift (the column), id_accuracy, shifted_accuracy
    describes: str  # what its models are, for the line's text

    def column(self, column: str) -> pd.DataFrame:
        return self.long[self.long["shift"] == column]


def read_reference(spec: str) -> Reference | None:
    """`run` -> None; `testbed` -> the shipped table; anything else -> a CSV file of its layout."""
    if spec == RUN:
        return None
    if spec == TESTBED:
        path, name, describes = published_path(TESTBED), TESTBED, "ImageNet-trained models"
    else:
        path = Path(spec)
        name, describes = path.name, "models"
    where = f"baselines {spec}"
    if not path.is_file():
        raise VlstressError(f"{where}: file not found: {path}")
    try:  # only an empty cell is empty: text where a number belongs stays an error
        wide = pd.read_csv(path, dtype={"model": str}, keep_default_na=False, na_values=[""])
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise VlstressError(f"{where}: not a readable CSV: {exc}") from None
    missing = [c for c in ("model", ID_COLUMN) if c not in wide.columns]
    columns = [c for c in TESTBED_COLUMNS.values() if c in wide.columns]
    if missing or not columns:
        raise VlstressError(
            f"{where}: needs columns model, {ID_COLUMN} and at least one of "
            f"{', '.join(TESTBED_COLUMNS.values())}; has {', '.join(map(str, wide.columns))}"
        )
    long = wide.melt(
        id_vars=["model", ID_COLUMN],
        value_vars=columns,
        var_name="shift",
        value_name="shifted_accuracy",
    ).rename(columns={ID_COLUMN: "id_accuracy"})
    long = long.dropna(subset=["id_accuracy", "shifted_accuracy"])
    try:
        long = robustness.validate_table(long, SCALE)
    except VlstressError as exc:
        raise VlstressError(f"{where}: {exc}") from None
    return Reference(name, path, long, describes)


def testbed_column(id_kind: str | None, shift_kind: str | None) -> str | None:
    """The testbed column a shift is measured in, or None: the in-distribution set must be ImageNet
    (kind `imagenet`) and the shift of a kind the testbed holds."""
    if id_kind != ID_KIND or shift_kind is None:
        return None
    return TESTBED_COLUMNS.get(shift_kind)


@dataclass(frozen=True)
class ShiftLine:
    """The line one shift is placed against, and what the table and figure say of it."""

    shift: str
    source: str  # `testbed`, the CSV's file name, or `run`
    text: str  # e.g. "testbed: 85 ImageNet-trained models"
    line: robustness.Line
    band: robustness.Band | None = None  # over the figure's grid; None: no bootstrap
    cloud: pd.DataFrame | None = None  # published baselines (id/shifted accuracy); None: the run's

    def to_dict(self) -> dict[str, Any]:
        found: dict[str, Any] = {**self.line.to_dict(), "source": self.source, "line": self.text}
        if self.band is not None:
            found["band"] = {
                "confidence": self.band.confidence,
                "n_resamples": self.band.n_resamples,
                "seed": self.band.seed,
            }
        return found


def _why_not(
    shift: str,
    id_kind: str | None,
    kind: str | None,
    reference: Reference | None,
    column: str | None,
) -> str:
    """Why a shift is placed against the run's own models."""
    if reference is None:
        return "baselines: run"
    if id_kind != ID_KIND:
        return f"no {reference.name} line for in-distribution kind {id_kind or 'unknown'}"
    if column is None:
        return f"no {reference.name} line for {kind or shift}"
    return f"no {reference.name} line for {kind}: {reference.name} has no {column} accuracies"


def _with_a_transform(base: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The baselines whose accuracies are neither 0 nor 1, and the names of the others: on logit or
    probit axes such an accuracy lies wherever the clip (robustness.EPSILON) puts it, and a
    published one is no measurement error to clip (ResNet-50 scores 0% on ImageNet-A, which was
    filtered against it) but would drag the line. The run's own models are clipped as before."""
    columns = ["id_accuracy", "shifted_accuracy"]
    inside = ((base[columns] > 0) & (base[columns] < 1)).all(axis=1)
    return base[inside], sorted(base.loc[~inside, "model"])


def _grid(reference: pd.DataFrame, run: pd.DataFrame, line: robustness.Line) -> np.ndarray:
    """Transformed accuracies spanning the figure's square panel: both accuracies of the baselines
    and of the run's models (padded 5%)."""
    axis = robustness.get_transform(line.transform)
    columns = ["id_accuracy", "shifted_accuracy"]
    x = axis.to_axis(
        np.concatenate([reference[columns].to_numpy().ravel(), run[columns].to_numpy().ravel()]),
        line.epsilon,
    )
    low, high = float(x.min()), float(x.max())
    pad = 0.05 * max(high - low, 1e-3)
    return np.linspace(low - pad, high + pad, GRID_POINTS)


def _band(
    found: pd.DataFrame,
    base: pd.DataFrame,
    line: robustness.Line,
    shift: str,
    text: str,
    transform: str,
    fit: str,
    epsilon: float,
    n_resamples: int,
    seed: int,
) -> robustness.Band | None:
    """The line's bootstrap band over its models `base`, and each placed model's ER interval
    (`INTERVAL_COLUMNS` of `found`, NaN without a band)."""
    found[INTERVAL_COLUMNS] = np.nan
    if n_resamples <= 0:
        return None
    grid = _grid(base, found, line)
    points = robustness.get_transform(transform).to_axis(found["id_accuracy"], epsilon)
    try:
        both = robustness.bootstrap_band(
            base["id_accuracy"],
            base["shifted_accuracy"],
            np.concatenate([grid, points]),
            transform,
            fit,
            epsilon,
            n_resamples,
            seed,
            CONFIDENCE,
        )
    except VlstressError as exc:
        raise VlstressError(f"shift {shift}, {text}: {exc} (or bootstrap 0)") from None
    inverse = robustness.get_transform(transform).to_accuracy
    shifted = found["shifted_accuracy"].to_numpy()
    # ER = shifted − predicted: the high end of the predicted accuracy is the low end of ER
    found["effective_robustness_low_pp"] = 100 * (shifted - inverse(both.high[len(grid) :]))
    found["effective_robustness_high_pp"] = 100 * (shifted - inverse(both.low[len(grid) :]))
    return robustness.Band(
        grid, both.low[: len(grid)], both.high[: len(grid)], n_resamples, seed, CONFIDENCE
    )


def _place_published(
    rows: pd.DataFrame,
    base: pd.DataFrame,
    shift: str,
    text: str,
    source: str,
    transform: str,
    fit: str,
    epsilon: float,
    n_resamples: int,
    seed: int,
) -> tuple[pd.DataFrame, ShiftLine]:
    line = robustness.fit_line(
        base["id_accuracy"], base["shifted_accuracy"], transform, fit, epsilon
    )
    found = robustness.effective_robustness(rows, [], transform, fit, lines={shift: line})
    band = _band(found, base, line, shift, text, transform, fit, epsilon, n_resamples, seed)
    cloud = base[["model", "id_accuracy", "shifted_accuracy"]].reset_index(drop=True)
    return found, ShiftLine(shift, source, text, line, band, cloud)


def place(
    shifts: pd.DataFrame,
    kinds: dict[str, str],
    in_distribution: str,
    reference: Reference | None,
    transform: str = "logit",
    fit: str = "ols",
    n_resamples: int = 1000,
    seed: int = 0,
    epsilon: float = robustness.EPSILON,
) -> tuple[pd.DataFrame, dict[str, ShiftLine], list[str]]:
    """Every (shift, model) of the run against its shift's line.

    `shifts`: model, shift, id_accuracy, shifted_accuracy (fractions; the shift is a test set's
    name, or a summary such as "corruptions (mean)"); `kinds`: test set -> its kind. Returns the
    rows (robustness.effective_robustness's columns, then `line_source`, `line` and the ER
    interval in pp where a bootstrap ran), the line of each shift that has one, and a note per
    shift left without one (its ER null)."""
    id_kind = kinds.get(in_distribution)
    frames, lines, notes = [], {}, []
    for shift, rows in sorted(shifts.groupby("shift"), key=lambda item: item[0]):
        rows = rows.reset_index(drop=True)
        left_out: list[str] = []
        kind = kinds.get(shift)
        column = testbed_column(id_kind, kind)
        base = reference.column(column) if reference is not None and column else None
        if base is not None and robustness.get_transform(transform).clips:
            base, left_out = _with_a_transform(base)
        if reference is not None and base is not None and len(base) >= 2:
            text = f"{reference.name}: {len(base)} {reference.describes}"
            if left_out:
                text += f" ({', '.join(left_out)} left out: no {transform} at 0 or 100%)"
            found, lines[shift] = _place_published(
                rows,
                base,
                shift,
                text,
                reference.name,
                transform,
                fit,
                epsilon,
                n_resamples,
                seed,
            )
        else:
            why = _why_not(shift, id_kind, kind, reference, column)
            n_models = rows["model"].nunique()
            try:
                if n_models < 2:
                    raise VlstressError(f"a line needs at least 2 models; this run has {n_models}")
                line = robustness.fit_line(
                    rows["id_accuracy"], rows["shifted_accuracy"], transform, fit, epsilon
                )
            except VlstressError as exc:
                text = f"none ({why}; no line over this run's models: {exc})"
                notes.append(f"no baseline line over this run's models: shift {shift}: {exc}")
                found = rows.sort_values("model", kind="mergesort").assign(
                    baseline=False,
                    predicted=np.nan,
                    effective_robustness=np.nan,
                    relative_robustness=rows["shifted_accuracy"] - rows["id_accuracy"],
                )
                found[INTERVAL_COLUMNS] = np.nan
            else:
                text = f"run's {line.n} models ({why})"
                found = robustness.effective_robustness(
                    rows, "all", transform, fit, 1, epsilon, lines={shift: line}
                )
                enough = line.n >= MIN_BOOTSTRAP_ITEMS
                if n_resamples > 0 and not enough:
                    text += f"; no band: a bootstrap needs {MIN_BOOTSTRAP_ITEMS} models"
                # the band over the models the line is fitted to, as a published line's
                band = _band(
                    found, found[found["baseline"].astype(bool)], line, shift, text, transform,
                    fit, epsilon, n_resamples if enough else 0, seed,
                )  # fmt: skip
                lines[shift] = ShiftLine(shift, RUN, text, line, band)
        found["line_source"] = lines[shift].source if shift in lines else "none"
        found["line"] = text
        frames.append(found)
    if not frames:
        return pd.DataFrame(columns=[*robustness.OUTPUT_COLUMNS, *LINE_COLUMNS]), lines, notes
    frame = pd.concat(frames, ignore_index=True)
    frame["effective_robustness_pp"] = 100.0 * frame["effective_robustness"].astype(float)
    frame["relative_robustness_pp"] = 100.0 * frame["relative_robustness"]
    order = [*robustness.OUTPUT_COLUMNS, *LINE_COLUMNS, *INTERVAL_COLUMNS]
    return frame[order], lines, notes
