"""Robustness fingerprints of model attributes: does a kind of model (an architecture, a pretraining
set, a fine-tuning method, a size) sit above or below the line that every model follows?

For each headline metric of the run (a *series*: one task, test set, condition and metric) the
models' values y are set against their in-distribution zero-shot top-1 x. A robust line over all
models (the pooled line) says what a model of that accuracy scores; a model's residual is how far
it lies off the line, in the metric's units (percentage points for shares); a group's offset is
the mean residual of its models, with a seeded BCa bootstrap interval and a p-value (one-sample
t-test), Holm-corrected across every tested row. A finding: an adjusted p below 1 - confidence
and an interval that excludes 0.

Input: the headline table (`headlines.headline_table`); no model work, no deep-learning library.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import special, stats
from statsmodels.stats.multitest import multipletests

from vlstress.errors import VlstressError

SERIES = ["task", "dataset", "condition", "metric"]
X_TASK, X_METRIC, X_CONDITION = "zeroshot", "top1", "original"
CLIP_PERCENT = (0.5, 99.5)  # shares at 0 or 100% have no logit: clipped as imagenet-testbed does
RESIDUAL_DECIMALS = 9
MIN_SERIES_MODELS = 3  # a line through fewer models says nothing about the others
SIZE = "size"
SIZE_NAMES = {1: ("all",), 2: ("small", "large"), 3: ("small", "medium", "large")}
NONE = "none"  # a model that was not fine-tuned: its fine-tuning attributes are empty
FINETUNE_ATTRIBUTES = ("finetune_method", "finetune_base")
BCA = "BCa"
PERCENTILE = "percentile (BCa undefined: all residuals equal)"
OK = "ok"
OFFSET_COLUMNS = [
    "grouping",
    "group",
    "n_models",
    "models",
    "task",
    "task_title",
    "dataset",
    "condition",
    "condition_label",
    "metric",
    "metric_label",
    "higher_is_better",
    "proportion",
    "offset",
    "lo",
    "hi",
    "interval_method",
    "p",
    "p_holm",
    "finding",
    "status",
]
LINE_COLUMNS = [*SERIES, "grouping", "group", "n_models", "space", "slope", "intercept"]


@dataclass(frozen=True)
class Settings:
    in_distribution: str  # the zero-shot test set whose top-1 is x
    attributes: tuple[str, ...]  # groupings, in order (findings.params.GROUPINGS)
    min_group: int
    n_resamples: int
    confidence: float
    seed: int


@dataclass(frozen=True)
class Fingerprints:
    """The result. `offsets`: one row per (grouping, group, series), OFFSET_COLUMNS. `points`: one
    row per (model, series): x, y, fitted (the pooled line at x), residual, and one column per
    grouping with the model's group (None: left out). `pooled` and `group_lines`: LINE_COLUMNS
    (the line in its space: logit of shares for proportions, the values otherwise; pooled rows have
    grouping and group empty). `notes`: what a reader must know (who was left out, and why)."""

    settings: Settings
    offsets: pd.DataFrame
    points: pd.DataFrame
    pooled: pd.DataFrame
    group_lines: pd.DataFrame
    n_models: int
    notes: list[str] = field(default_factory=list)

    @property
    def findings(self) -> pd.DataFrame:
        return self.offsets[self.offsets["finding"]]

    @property
    def n_tested(self) -> int:
        return int(self.offsets["p"].notna().sum())


# --------------------------------------------------------------------------- the line


def logit_percent(values: np.ndarray) -> np.ndarray:
    return special.logit(np.clip(np.asarray(values, dtype="float64"), *CLIP_PERCENT) / 100.0)


def to_space(values: np.ndarray, proportion: bool) -> np.ndarray:
    """Where the line is straight: logit of the share for proportions, the values otherwise."""
    return logit_percent(values) if proportion else np.asarray(values, dtype="float64")


def from_space(values: np.ndarray, proportion: bool) -> np.ndarray:
    return 100.0 * special.expit(values) if proportion else np.asarray(values, dtype="float64")


def robust_line(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(slope, intercept) of y on x, both already in the line's space.

    Theil-Sen rather than RLM: a group with a real offset is exactly the points a least-squares
    line would bend towards (shrinking the offset it is meant to show); Theil-Sen's median slope
    resists that without a scale estimate (RLM's MAD collapses to 0 when many models score the
    same, as random-init ones do), is deterministic and defined from 2 distinct x values on.
    The intercept is the median of y - slope * x ("joint"): the pooled line then splits the
    models' residuals in half. With a single distinct x the line is flat at the median of y."""
    if np.unique(x).size < 2:
        return 0.0, float(np.median(y))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its slope interval (unused) warns on tied x
        found = stats.theilslopes(y, x, method="joint")
    return float(found.slope), float(found.intercept)


def _x_space(x_percent: np.ndarray, proportion: bool) -> np.ndarray:
    # x is a share (top-1): in logit space with a share y, as it is otherwise
    return logit_percent(x_percent) if proportion else np.asarray(x_percent, dtype="float64")


def fit(x_percent: np.ndarray, y: np.ndarray, proportion: bool) -> tuple[float, float]:
    """The robust line of a series: logit-logit for proportions, linear otherwise."""
    return robust_line(_x_space(x_percent, proportion), to_space(y, proportion))


def fitted(x_percent: np.ndarray, slope: float, intercept: float, proportion: bool) -> np.ndarray:
    return from_space(intercept + slope * _x_space(x_percent, proportion), proportion)


def line_band(
    x_percent: np.ndarray,
    y: np.ndarray,
    proportion: bool,
    grid_percent: np.ndarray,
    n_resamples: int,
    confidence: float,
    seed: int,
) -> tuple[np.ndarray, np.ndarray] | None:
    """The percentile bootstrap band of a series' robust line over its models: the models
    resampled with replacement, the line refitted (`fit`), its value at each grid point, the
    (1 ± confidence) / 2 quantiles. None below `MIN_BOOTSTRAP_ITEMS` models or without
    resamples. Seeded: the same points give the same band."""
    from vlstress.report.intervals import MIN_BOOTSTRAP_ITEMS

    x = np.asarray(x_percent, dtype="float64")
    values = np.asarray(y, dtype="float64")
    if len(x) < MIN_BOOTSTRAP_ITEMS or n_resamples < 1:
        return None
    rng = np.random.default_rng(seed)
    curves = np.empty((n_resamples, len(grid_percent)))
    for i in range(n_resamples):
        pick = rng.integers(0, len(x), len(x))
        slope, intercept = fit(x[pick], values[pick], proportion)
        curves[i] = fitted(grid_percent, slope, intercept, proportion)
    tail = (1.0 - confidence) / 2.0
    return np.quantile(curves, tail, axis=0), np.quantile(curves, 1.0 - tail, axis=0)


# --------------------------------------------------------------------------- one group's offset


@dataclass(frozen=True)
class Offset:
    mean: float
    lo: float
    hi: float
    method: str
    p: float


def group_offset(residuals: np.ndarray, confidence: float, n_resamples: int, seed: int) -> Offset:
    """The mean residual, its bootstrap interval and its p-value.

    The interval is BCa (`scipy.stats.bootstrap`, a fresh generator seeded `seed` per group, so a
    row does not depend on the others); BCa is undefined when every residual is the same, where
    the percentile interval (a point) stands in and `method` says so. The p-value is a one-sample
    t-test against 0 rather than a permutation test: it is deterministic and continuous, which
    Holm's correction over hundreds of rows needs (a permutation p cannot go below
    1 / (resamples + 1)); the bootstrap interval covers what normality misses. No p-value where
    the residuals do not vary (the test is undefined)."""
    values = np.asarray(residuals, dtype="float64")
    mean = float(values.mean())
    if np.ptp(values) == 0:
        return Offset(mean, mean, mean, PERCENTILE, math.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a degenerate jackknife warns; its NaN is handled below
        found = stats.bootstrap(
            (values,),
            np.mean,
            confidence_level=confidence,
            n_resamples=n_resamples,
            method=BCA,
            rng=np.random.default_rng(seed),
        )
    lo, hi = float(found.confidence_interval.low), float(found.confidence_interval.high)
    method = BCA
    if not (math.isfinite(lo) and math.isfinite(hi)):
        found = stats.bootstrap(
            (values,),
            np.mean,
            confidence_level=confidence,
            n_resamples=n_resamples,
            method="percentile",
            rng=np.random.default_rng(seed),
        )
        lo, hi = float(found.confidence_interval.low), float(found.confidence_interval.high)
        method = "percentile (BCa undefined)"
    p = float(stats.ttest_1samp(values, 0.0).pvalue)
    return Offset(mean, lo, hi, method, p)


def holm(p: pd.Series) -> pd.Series:
    """Holm's step-down adjustment of the defined p-values (NaN stays NaN: untested rows are not
    in the family)."""
    out = pd.Series(np.nan, index=p.index, dtype="float64")
    tested = p.notna()
    if tested.any():
        out[tested] = multipletests(p[tested].to_numpy(dtype="float64"), method="holm")[1]
    return out


# --------------------------------------------------------------------------- who is in which group


def _empty(value: object) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def _label(value: object) -> str:
    """A cell as a group name: `224.0` -> `224`."""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


def _megas(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def size_groups(params_m: pd.Series) -> tuple[pd.Series, str]:
    """The image tower's parameters (M) of each model (index: model) in thirds of the models:
    `small (11.7–22.6 M)`, ...; tied sizes can merge thirds (fewer groups, named by what is
    left). Returns (group per model, None where unknown; a note)."""
    known = params_m.dropna().astype("float64")
    groups = pd.Series(None, index=params_m.index, dtype="object")
    if known.empty:
        return groups, ""
    bins = pd.qcut(known, 3, labels=False, duplicates="drop")
    n_bins = int(bins.max()) + 1
    names = SIZE_NAMES[n_bins]
    for index, name in enumerate(names):
        members = known[bins == index]
        low, high = _megas(members.min()), _megas(members.max())
        span = low if low == high else f"{low}–{high}"
        groups[members.index] = f"{name} ({span} M)"
    groups = groups.where(groups.notna(), None)  # unknown: None, as the other groupings have it
    note = (
        f"size: the image tower's parameters in thirds of the {len(known)} model(s) with a count"
        + ("" if n_bins == 3 else f"; tied counts leave {n_bins} group(s)")
    )
    return groups, note


def model_groups(models: pd.DataFrame, attributes: Sequence[str]) -> tuple[pd.DataFrame, list[str]]:
    """Each model's group under each grouping (`models`: one row per model, indexed by model,
    with the attribute columns). Empty attributes leave the model out of that grouping, except
    the fine-tuning ones of a model that is not a fine-tuned checkpoint: `none`."""
    notes = []
    out = pd.DataFrame(index=models.index)
    for name in attributes:
        if name == SIZE:
            out[name], note = size_groups(models["params_image_m"])
            notes += [note] if note else []
        elif name not in models.columns:
            raise VlstressError(
                f"model attribute {name!r} is not a column of the summary; re-run "
                "`vlstress summarize`"
            )
        else:
            values = models[name].astype("object")
            if name in FINETUNE_ATTRIBUTES:
                # a pretrained model has no fine-tuning attributes: it is in group "none"; a
                # checkpoint that lacks them is unknown (it may be a fine-tune of anything)
                pretrained = (models["weights_kind"].astype(str) != "checkpoint") & models[
                    "finetune_base"
                ].map(_empty)
                values = values.where(~(values.map(_empty) & pretrained), NONE)
            cells = [None if _empty(v) else _label(v) for v in values]
            out[name] = pd.Series(cells, index=values.index, dtype="object")
        missing = sorted(out.index[out[name].isna()])
        if missing and len(missing) == len(out):
            notes.append(f"{name}: no model has one; the grouping has no rows")
        elif missing:
            notes.append(
                f"{name}: {len(missing)} model(s) without one left out of that grouping"
                f" ({', '.join(map(str, missing))})"
            )
    if any(name in FINETUNE_ATTRIBUTES for name in attributes):
        notes.append(f"models that are not fine-tuned checkpoints are in group '{NONE}'")
    return out, notes


# --------------------------------------------------------------------------- the table


def in_distribution_x(headlines: pd.DataFrame, name: str) -> pd.Series:
    """Each model's zero-shot top-1 (%) on the in-distribution set `name` (index: model)."""
    rows = headlines[
        (headlines["task"] == X_TASK)
        & (headlines["metric"] == X_METRIC)
        & (headlines["condition"] == X_CONDITION)
        & (headlines["dataset"].astype(str) == name)
    ]
    rows = rows[rows["value"].notna()]
    if rows.empty:
        sets = sorted(
            headlines.loc[
                (headlines["task"] == X_TASK) & (headlines["metric"] == X_METRIC), "dataset"
            ]
            .astype(str)
            .unique()
        )
        raise VlstressError(
            f"no zero-shot top-1 on in-distribution set {name!r} in the summary; "
            + (f"its zero-shot test sets: {', '.join(sets)}" if sets else "it has no zero-shot")
            + " (zeroshot.in_distribution must name one of the zero-shot test sets)"
        )
    return rows.drop_duplicates("model").set_index("model")["value"].astype("float64")


def fingerprints(headlines: pd.DataFrame, settings: Settings) -> Fingerprints:
    """Every group's offset on every series of `headlines` (the headline table)."""
    x = in_distribution_x(headlines, settings.in_distribution)
    notes = []
    others = sorted(set(headlines["model"]) - set(x.index))
    if others:
        notes.append(
            f"{len(others)} model(s) without a zero-shot top-1 on {settings.in_distribution}"
            f" left out: {', '.join(map(str, others))}"
        )
    models = headlines.drop_duplicates("model").set_index("model").loc[x.index]
    groups, group_notes = model_groups(models, settings.attributes)
    notes += group_notes
    is_x = (
        (headlines["task"] == X_TASK)
        & (headlines["metric"] == X_METRIC)
        & (headlines["condition"] == X_CONDITION)
        & (headlines["dataset"].astype(str) == settings.in_distribution)
    )
    rows = headlines[~is_x & headlines["model"].isin(x.index) & headlines["value"].notna()]
    offsets, points, pooled, lines = [], [], [], []
    small_series = []
    for key, series in rows.groupby(SERIES, sort=False, dropna=False):
        found = _series(dict(zip(SERIES, key)), series, x, groups, settings)
        offsets += found.rows
        points.append(found.points)
        lines += found.lines
        if found.pooled is not None:
            pooled.append(found.pooled)
        else:
            small_series.append(" · ".join(map(str, key)))
    if small_series:
        notes.append(
            f"{len(small_series)} series with fewer than {MIN_SERIES_MODELS} models have no line"
            f" (too small): {'; '.join(small_series)}"
        )
    table = pd.DataFrame(offsets, columns=[c for c in OFFSET_COLUMNS if c != "p_holm"])
    table["p_holm"] = holm(table["p"])
    alpha = 1.0 - settings.confidence
    table["finding"] = ((table["p_holm"] < alpha) & ((table["lo"] > 0) | (table["hi"] < 0))).astype(
        bool
    )
    table = table[OFFSET_COLUMNS]
    fallbacks = int(table["interval_method"].str.startswith("percentile").sum())
    if fallbacks:
        notes.append(
            f"{fallbacks} group(s) whose residuals do not vary: BCa is undefined, the percentile"
            " interval (a point) stands in and no p-value is given"
        )
    tested = int(table["p"].notna().sum())
    if not table.empty and tested == 0:
        notes.append(
            f"no group of at least {settings.min_group} models (min_group) on a series with two"
            " groups or more: no offset is tested"
        )
    return Fingerprints(
        settings=settings,
        offsets=table.reset_index(drop=True),
        points=pd.concat(points, ignore_index=True) if points else pd.DataFrame(),
        pooled=pd.DataFrame(pooled, columns=LINE_COLUMNS),
        group_lines=pd.DataFrame(lines, columns=LINE_COLUMNS),
        n_models=len(x),
        notes=notes,
    )


@dataclass
class _Series:
    rows: list[dict]  # offset rows
    points: pd.DataFrame
    pooled: dict | None  # the pooled line (None: too few models)
    lines: list[dict]  # the groups' lines


def _series(
    keys: dict, series: pd.DataFrame, x: pd.Series, groups: pd.DataFrame, settings: Settings
) -> _Series:
    """One series: its pooled line, every model's residual, every group's offset."""
    series = series.drop_duplicates("model").set_index("model")
    info = series.iloc[0]
    proportion = bool(info["interval"] == "Wilson")  # a share with a Wilson interval
    space = "logit" if proportion else "linear"
    xs, ys = x[series.index].to_numpy(), series["value"].to_numpy(dtype="float64")
    described = {k: info[k] for k in ("task_title", "condition_label", "metric_label")}
    described |= {"higher_is_better": bool(info["higher_is_better"]), "proportion": proportion}
    enough = len(series) >= MIN_SERIES_MODELS
    pooled = None
    line = np.full(len(series), np.nan)
    if enough:
        slope, intercept = fit(xs, ys, proportion)
        line = fitted(xs, slope, intercept, proportion)
        pooled = {**keys, "grouping": "", "group": "", "n_models": len(series), "space": space}
        pooled |= {"slope": slope, "intercept": intercept}
    # a share is compared clipped, as it was fitted: 0% on a line that cannot go below 0.5% is
    # on it, not 0.5 points under it. Rounded: a model on the line is off it by float noise
    # (1e-15) that a t-test would read as a difference
    seen = np.clip(ys, *CLIP_PERCENT) if proportion else ys
    residual = pd.Series(np.round(seen - line, RESIDUAL_DECIMALS), index=series.index)
    points = pd.DataFrame(
        {"model": series.index, "label": series["label"].to_numpy(), "x": xs, "y": ys}
        | {"fitted": line, "residual": residual.to_numpy()}
    )
    for k, v in (keys | described).items():
        points[k] = v
    rows, lines = [], []
    for name in settings.attributes:
        points[name] = groups.loc[series.index, name].to_numpy()
        members = groups.loc[series.index, name].dropna()
        names = _ordered(members.unique(), name)
        for group in names:
            inside = sorted(members.index[members == group])
            res = residual[inside].to_numpy()
            row = {"grouping": name, "group": group, "n_models": len(inside)}
            row |= {"models": ", ".join(map(str, inside)), **keys, **described}
            row |= {"offset": float(res.mean()) if enough else math.nan}
            row |= {"lo": math.nan, "hi": math.nan, "interval_method": "", "p": math.nan}
            row |= {"finding": False}
            row["status"] = _too_small(len(series), len(names), len(inside), settings)
            if row["status"] == OK:
                found = group_offset(res, settings.confidence, settings.n_resamples, settings.seed)
                row |= {"lo": found.lo, "hi": found.hi, "interval_method": found.method}
                row["p"] = found.p
            rows.append(row)
            if enough and len(inside) >= settings.min_group:
                chosen = series.index.isin(inside)
                slope_g, intercept_g = fit(xs[chosen], ys[chosen], proportion)
                lines.append(
                    {**keys, "grouping": name, "group": group, "n_models": len(inside)}
                    | {"space": space, "slope": slope_g, "intercept": intercept_g}
                )
    return _Series(rows, points, pooled, lines)


def _too_small(n_series: int, n_groups: int, n_group: int, settings: Settings) -> str:
    """`ok`, or why the row is not tested."""
    if n_series < MIN_SERIES_MODELS:
        return f"too small: {n_series} model(s) on the series (fewer than {MIN_SERIES_MODELS})"
    if n_groups < 2:
        return "too small: a single group on the series (nothing to compare)"
    if n_group < settings.min_group:
        return f"too small: {n_group} model(s) (fewer than min_group {settings.min_group})"
    return OK


def _ordered(names: Sequence[str], grouping: str) -> list[str]:
    """Groups in reading order: sizes small to large, `none` first, the rest alphabetically."""
    if grouping == SIZE:
        order = [n for sizes in SIZE_NAMES.values() for n in sizes]
        return sorted(names, key=lambda n: order.index(n.split(" (")[0]))
    return sorted(names, key=lambda n: (n != NONE, n.casefold()))
