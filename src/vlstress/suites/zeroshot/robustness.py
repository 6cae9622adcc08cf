"""Effective and relative robustness of classifiers under distribution shift.

Why: a model's accuracy on a shifted test set (ImageNet-R, -Sketch, ...) mostly follows
its in-distribution (ID) accuracy. Across many models, transformed shifted accuracy is
close to a linear function of transformed ID accuracy ("accuracy on the line", Taori et
al. 2020; Miller et al. 2021). A model is robust only if it lies *above* that line:

- effective robustness (ER) = shifted accuracy − the accuracy the baseline line predicts
  from its ID accuracy: `shift − inverse(slope · transform(id) + intercept)`;
- relative robustness (RR) = shifted accuracy − ID accuracy (the raw drop, negative
  when the shift hurts).

Units: every accuracy and both robustness numbers are fractions in [0, 1] (inputs given
in percent are divided by `scale` first); the `*_pp` columns repeat ER and RR in
percentage points (× 100) for reading.

The line is fitted per shift over the baseline models only, on transformed axes:
`logit` (log(p / (1 − p)), Taori et al.), `probit` (Φ⁻¹, Miller et al.) or `linear`
(none). Accuracies of exactly 0 or 1 have no logit/probit; they are clipped to
[EPSILON, 1 − EPSILON] before the transform (EPSILON = 1e-4, half an image of a
5,000-image test set: below what any of the test sets here can resolve). Fits come from
scikit-learn: `ols` (LinearRegression) or `huber` (HuberRegressor, unregularised, so a
few off-line models cannot drag the line). `bootstrap_band` gives a line's uncertainty: the
percentile bootstrap over its baseline models (scipy.stats.bootstrap), at any ID accuracies.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
from scipy import special

from vlstress.errors import VlstressError

EPSILON = 1e-4
REQUIRED_COLUMNS = ("model", "id_accuracy", "shifted_accuracy")
ACCURACY_COLUMNS = ("id_accuracy", "shifted_accuracy")
DEFAULT_SHIFT = "shifted"  # the shift name of a table without a `shift` column
SCALES = (1, 100)
# a bootstrap band leaves out resamples without a line (every model at one ID accuracy), up to
# this share of them; more, and the baselines are too few for a band
DEGENERATE_SHARE = 0.05
HUBER_EPSILON = 1.35  # scikit-learn's default: 95% efficiency on Gaussian residuals


# --------------------------------------------------------------------------- transforms


@dataclass(frozen=True)
class Transform:
    """An axis transform of accuracies: `forward` maps [0, 1] onto the axis, `inverse` maps back."""

    name: str
    forward: Callable[[np.ndarray], np.ndarray]
    inverse: Callable[[np.ndarray], np.ndarray]
    clips: bool  # whether 0 and 1 must be clipped away (they map to ±inf)

    def to_axis(self, accuracy: Iterable[float] | float, epsilon: float = EPSILON) -> np.ndarray:
        values = np.asarray(accuracy, dtype=float)
        if self.clips:
            values = np.clip(values, epsilon, 1.0 - epsilon)
        return self.forward(values)

    def to_accuracy(self, axis: Iterable[float] | float) -> np.ndarray:
        return self.inverse(np.asarray(axis, dtype=float))


def _identity(values: np.ndarray) -> np.ndarray:
    return values


TRANSFORMS: dict[str, Transform] = {
    "logit": Transform("logit", special.logit, special.expit, clips=True),
    "probit": Transform("probit", special.ndtri, special.ndtr, clips=True),
    "linear": Transform("linear", _identity, _identity, clips=False),
}


def get_transform(name: str) -> Transform:
    if name not in TRANSFORMS:
        raise VlstressError(f"unknown transform {name!r}; known: {', '.join(TRANSFORMS)}")
    return TRANSFORMS[name]


# --------------------------------------------------------------------------- fits


def _ols(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    from sklearn.linear_model import LinearRegression

    model = LinearRegression().fit(x[:, None], y)
    return float(model.coef_[0]), float(model.intercept_)


def _huber(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    from sklearn.linear_model import HuberRegressor

    model = HuberRegressor(epsilon=HUBER_EPSILON, alpha=0.0, max_iter=10_000).fit(x[:, None], y)
    return float(model.coef_[0]), float(model.intercept_)


FITS: dict[str, Callable[[np.ndarray, np.ndarray], tuple[float, float]]] = {
    "ols": _ols,
    "huber": _huber,
}
FIT_TITLES = {"ols": "OLS", "huber": "Huber"}


# --------------------------------------------------------------------------- the line


@dataclass(frozen=True)
class Line:
    """`transform(shifted) ≈ slope · transform(id) + intercept`, fitted on `n` baseline models."""

    slope: float
    intercept: float
    transform: str
    fit: str
    n: int
    epsilon: float = EPSILON

    def predict(self, id_accuracy: Iterable[float] | float) -> np.ndarray:
        """The shifted accuracy the baselines predict for these ID accuracies (fractions)."""
        transform = get_transform(self.transform)
        return transform.to_accuracy(
            self.slope * transform.to_axis(id_accuracy, self.epsilon) + self.intercept
        )

    def to_dict(self) -> dict[str, float | int | str]:
        return asdict(self)


def _check_fractions(values: np.ndarray, what: str) -> None:
    if not np.all(np.isfinite(values)):
        raise VlstressError(f"{what} has NaN or infinite values")
    if values.min(initial=0.0) < 0.0 or values.max(initial=0.0) > 1.0:
        hint = " (percent? pass scale=100)" if values.max() <= 100.0 and values.min() >= 0.0 else ""
        raise VlstressError(
            f"{what} must be accuracies in [0, 1], got values in [{values.min():g}, "
            f"{values.max():g}]{hint}"
        )


def fit_line(
    id_accuracy: Sequence[float],
    shifted_accuracy: Sequence[float],
    transform: str = "logit",
    fit: str = "ols",
    epsilon: float = EPSILON,
) -> Line:
    """Fit transformed shifted accuracy on transformed ID accuracy (fractions in [0, 1])."""
    if fit not in FITS:
        raise VlstressError(f"unknown fit {fit!r}; known: {', '.join(FITS)}")
    if not 0.0 < epsilon < 0.5:
        raise VlstressError(f"epsilon must be in (0, 0.5), got {epsilon:g}")
    axis = get_transform(transform)
    x = np.asarray(id_accuracy, dtype=float)
    y = np.asarray(shifted_accuracy, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise VlstressError(
            f"ID and shifted accuracies must be two lists of equal length, got {x.shape} and "
            f"{y.shape}"
        )
    _check_fractions(x, "ID accuracy")
    _check_fractions(y, "shifted accuracy")
    tx, ty = axis.to_axis(x, epsilon), axis.to_axis(y, epsilon)
    if len(np.unique(tx)) < 2:
        raise VlstressError(
            f"a line needs at least 2 baseline models with different ID accuracies, got {len(x)} "
            f"model(s) with {len(np.unique(tx))} distinct"
        )
    slope, intercept = FITS[fit](tx, ty)
    return Line(
        slope=slope,
        intercept=intercept,
        transform=transform,
        fit=fit,
        n=int(len(x)),
        epsilon=epsilon,
    )


# --------------------------------------------------------------------------- the band


@dataclass(frozen=True)
class Band:
    """A line's bootstrap band: the `confidence` interval of the predicted (transformed) shifted
    accuracy at each point of `axis` (transformed ID accuracies), over `n_resamples` refits on the
    baseline models resampled with replacement (seeded by `seed`)."""

    axis: np.ndarray
    low: np.ndarray
    high: np.ndarray
    n_resamples: int
    seed: int
    confidence: float


def bootstrap_band(
    id_accuracy: Sequence[float],
    shifted_accuracy: Sequence[float],
    axis: Sequence[float] | np.ndarray,
    transform: str = "logit",
    fit: str = "ols",
    epsilon: float = EPSILON,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Band:
    """The percentile bootstrap (scipy.stats.bootstrap, paired) of the line `fit_line` fits to
    these baselines (fractions), evaluated at `axis` (transformed ID accuracies): resample the
    baseline models with replacement, refit, and take the (1 ± confidence) / 2 percentiles of the
    predicted transformed accuracy at each point. Seeded: the same inputs give the same band."""
    from scipy import stats

    if n_resamples < 1:
        raise VlstressError(f"a bootstrap needs at least 1 resample, got {n_resamples}")
    line = fit_line(id_accuracy, shifted_accuracy, transform, fit, epsilon)
    if line.n < 3:
        raise VlstressError(f"a bootstrap band needs at least 3 baseline models, got {line.n}")
    points = np.asarray(axis, dtype=float)
    to_axis = get_transform(transform).to_axis
    tx = to_axis(np.asarray(id_accuracy, dtype=float), epsilon)
    ty = to_axis(np.asarray(shifted_accuracy, dtype=float), epsilon)

    def predicted(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        if len(np.unique(x)) < 2:  # every resampled model at one ID accuracy: no line
            return np.full(points.shape, np.nan)
        # OLS by numpy.polyfit: the same least-squares line as LinearRegression, 5x faster to
        # refit a thousand times
        slope, intercept = np.polyfit(x, y, 1) if fit == "ols" else FITS[fit](x, y)
        return slope * points + intercept

    with warnings.catch_warnings():  # resamples without a line: handled below
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        result = stats.bootstrap(
            (tx, ty),
            predicted,
            paired=True,
            vectorized=False,
            n_resamples=n_resamples,
            confidence_level=confidence,
            method="percentile",
            rng=np.random.default_rng(seed),
        )
    low, high = result.confidence_interval.low, result.confidence_interval.high
    distribution = np.asarray(result.bootstrap_distribution, dtype=float).reshape(len(points), -1)
    valid = ~np.isnan(distribution).any(axis=0)
    if not valid.all():  # resamples of one ID accuracy have no line: left out, unless too many
        if valid.sum() < (1 - DEGENERATE_SHARE) * n_resamples:
            raise VlstressError(
                f"{int((~valid).sum())} of {n_resamples} bootstrap resamples of the {line.n} "
                "baselines hold one ID accuracy only (no line): too few distinct baselines for a "
                "band"
            )
        tail = 100 * (1 - confidence) / 2
        low, high = np.percentile(distribution[:, valid], [tail, 100 - tail], axis=1)
    return Band(
        axis=points,
        low=np.asarray(low, dtype=float),
        high=np.asarray(high, dtype=float),
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
    )


# --------------------------------------------------------------------------- tables


def validate_table(table: pd.DataFrame, scale: float = 1) -> pd.DataFrame:
    """Columns present, accuracies numeric, finite and within [0, scale]; returns a copy in
    fractions with a `shift` column."""
    missing = [c for c in REQUIRED_COLUMNS if c not in table.columns]
    if missing:
        raise VlstressError(
            f"accuracy table lacks column(s) {', '.join(missing)}; has "
            f"{', '.join(map(str, table.columns))}"
        )
    if scale not in SCALES:
        raise VlstressError(f"scale must be 1 (fractions) or 100 (percent), got {scale!r}")
    frame = table.copy()
    if "shift" not in frame.columns:
        frame["shift"] = DEFAULT_SHIFT
    if frame.empty:
        raise VlstressError("accuracy table has no rows")
    frame["model"] = frame["model"].astype(str)
    frame["shift"] = frame["shift"].astype(str)
    for column in ACCURACY_COLUMNS:
        numbers = pd.to_numeric(frame[column], errors="coerce")
        bad = frame.loc[numbers.isna(), ["model", "shift"]]
        if not bad.empty:
            where = ", ".join(f"{m} ({s})" for m, s in bad.head(5).itertuples(index=False))
            more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
            raise VlstressError(
                f"column {column} has missing or non-numeric values (NaN) for {where}{more}"
            )
        frame[column] = numbers.astype(float)
    values = frame[list(ACCURACY_COLUMNS)].to_numpy()
    if not np.all(np.isfinite(values)):
        raise VlstressError("accuracy table has infinite accuracies")
    low, high = float(values.min()), float(values.max())
    if low < 0 or high > scale:
        hint = (
            " (they look like percent: use scale 100)"
            if scale == 1 and high <= 100 and low >= 0
            else ""
        )
        raise VlstressError(
            f"accuracies must lie in [0, {scale}] for scale {scale}, got [{low:g}, {high:g}]{hint}"
        )
    if scale == 100 and high <= 1:
        raise VlstressError(
            f"scale 100 (percent) but every accuracy is at most 1 (max {high:g}): they look like "
            "fractions, use scale 1"
        )
    frame[list(ACCURACY_COLUMNS)] = values / scale
    duplicated = frame.duplicated(["model", "shift"], keep=False)
    if duplicated.any():
        pairs = sorted(set(zip(frame.loc[duplicated, "model"], frame.loc[duplicated, "shift"])))
        raise VlstressError(
            "model(s) listed more than once for a shift: "
            f"{', '.join(f'{m} ({s})' for m, s in pairs[:5])}"
        )
    return frame


def resolve_baselines(models: Iterable[str], baselines: str | Sequence[str]) -> list[str]:
    """`"all"` -> every model; a list -> those names, each of which must be in the table."""
    known = sorted(set(models))
    if isinstance(baselines, str):
        if baselines != "all":
            raise VlstressError(
                f"baselines must be 'all' or a list of model names, got {baselines!r}"
            )
        return known
    names = list(dict.fromkeys(baselines))
    unknown = sorted(set(names) - set(known))
    if unknown:
        raise VlstressError(
            f"baseline model(s) not in the table: {', '.join(unknown[:10])}"
            + (f" and {len(unknown) - 10} more" if len(unknown) > 10 else "")
        )
    return names


def fit_lines(
    table: pd.DataFrame,
    baselines: str | Sequence[str] = "all",
    transform: str = "logit",
    fit: str = "ols",
    scale: float = 1,
    epsilon: float = EPSILON,
) -> dict[str, Line]:
    """One baseline line per shift (shifts in sorted order)."""
    frame = validate_table(table, scale)
    names = set(resolve_baselines(frame["model"], baselines))
    lines = {}
    for shift, group in sorted(frame.groupby("shift"), key=lambda item: item[0]):
        base = group[group["model"].isin(names)]
        if len(base) < 2:
            raise VlstressError(
                f"shift {shift}: {len(base)} baseline model(s) with accuracies; a line needs at "
                "least 2"
            )
        try:
            lines[shift] = fit_line(
                base["id_accuracy"], base["shifted_accuracy"], transform, fit, epsilon
            )
        except VlstressError as exc:
            raise VlstressError(f"shift {shift}: {exc}") from None
    return lines


OUTPUT_COLUMNS = [
    "shift",
    "model",
    "baseline",
    "id_accuracy",
    "shifted_accuracy",
    "predicted",
    "effective_robustness",
    "relative_robustness",
    "effective_robustness_pp",
    "relative_robustness_pp",
]


def effective_robustness(
    table: pd.DataFrame,
    baselines: str | Sequence[str] = "all",
    transform: str = "logit",
    fit: str = "ols",
    scale: float = 1,
    epsilon: float = EPSILON,
    lines: dict[str, Line] | None = None,
) -> pd.DataFrame:
    """Per (shift, model): predicted shifted accuracy, ER and RR (fractions, and `_pp` in percentage
    points).

    `table` has columns model, id_accuracy, shifted_accuracy and optionally shift (long
    format: one row per model and shift). Rows come back sorted by shift, then model;
    `baseline` says whether the model took part in the fit. Extra columns are kept.
    """
    frame = validate_table(table, scale)
    names = set(resolve_baselines(frame["model"], baselines))
    if lines is None:
        lines = fit_lines(frame, sorted(names), transform, fit, 1, epsilon)
    unfitted = sorted(set(frame["shift"]) - set(lines))
    if unfitted:
        raise VlstressError(f"no baseline line for shift(s) {', '.join(unfitted)}")
    frame["baseline"] = frame["model"].isin(names)
    frame["predicted"] = np.nan
    for shift, line in lines.items():
        rows = frame["shift"] == shift
        frame.loc[rows, "predicted"] = line.predict(frame.loc[rows, "id_accuracy"].to_numpy())
    frame["effective_robustness"] = frame["shifted_accuracy"] - frame["predicted"]
    frame["relative_robustness"] = frame["shifted_accuracy"] - frame["id_accuracy"]
    frame["effective_robustness_pp"] = 100.0 * frame["effective_robustness"]
    frame["relative_robustness_pp"] = 100.0 * frame["relative_robustness"]
    extra = [c for c in frame.columns if c not in OUTPUT_COLUMNS]
    frame = frame[OUTPUT_COLUMNS + extra].sort_values(["shift", "model"], kind="mergesort")
    return frame.reset_index(drop=True)
