"""The headline metrics of a run: one row per (model, task, set, condition, headline metric) of the
summary, the tasks' `headlines` declarations applied, with a 95% interval where one is defined.

Proportions (top-1, R@1, attack success, shape bias) get Wilson's interval over the items the
record counted. Other metrics whose task declares how to resample its per-item outcomes (ECE,
AUROC, FPR@95) get a seeded BCa bootstrap over those items; the rest (flip probability, error
ratios, a case averaged over replicate seeds) have none, and say so (`interval` is empty)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from vlstress.outcomes import Outcomes
from vlstress.report import tasks
from vlstress.report.display import Headline
from vlstress.report.intervals import bootstrap_interval, wilson_percent
from vlstress.report.records import CASE_COLUMNS, RECORD_COLUMNS

CASE = CASE_COLUMNS  # one (model, set, task, condition): a record
# what the summary says of the model: its columns before the evaluation's
MODEL_COLUMNS = RECORD_COLUMNS[: RECORD_COLUMNS.index("dataset")]
COLUMNS = [
    *MODEL_COLUMNS,
    "task",
    "task_title",
    "dataset",
    "condition",
    "condition_label",
    "metric",
    "metric_label",
    "higher_is_better",
    "value",
    "n",
    "n_seeds",
    "lo",
    "hi",
    "interval",
]
SMALL_N = 30  # below this many items a share's interval is wider than about ±15 points


@dataclass(frozen=True)
class Bootstrap:
    """The per-item outcomes of the run's cases and how to resample them."""

    items: Mapping[tuple, list[Outcomes]]
    n_resamples: int = 1000
    seed: int = 0


def headline_table(
    summary: pd.DataFrame, confidence: float = 0.95, bootstrap: Bootstrap | None = None
) -> pd.DataFrame:
    """Every headline row of the summary (mean over replicate seeds), with its interval: Wilson
    for a share, a BCa bootstrap of the items (given `bootstrap`) for a metric that says how."""
    parts = []
    for name, task in tasks.TASKS.items():
        if not task.headlines:
            continue
        rows = summary[summary["task"] == name]
        if rows.empty:
            continue
        # metric values per case: the mean over replicate seeds
        values = rows.groupby([*CASE, "metric"], dropna=False)["value"].mean().unstack("metric")
        seeds = rows.groupby([*CASE, "metric"], dropna=False)["value"].size().groupby(CASE).max()
        info = rows.drop_duplicates(CASE).set_index(CASE)
        for headline in task.headlines:
            if headline.metric not in values.columns:
                continue
            keep = values.index.to_frame(index=False)
            mask = (
                (keep["condition"] == headline.condition).to_numpy()
                if headline.condition is not None
                else slice(None)
            )
            frame = info.loc[values.index[mask]].reset_index()
            frame["value"] = headline.scale * values[headline.metric].to_numpy()[mask]
            n = _items(headline, values, frame, mask)
            frame["n"] = n
            frame["n_seeds"] = seeds.loc[values.index[mask]].to_numpy()
            frame["task_title"] = task.title
            frame["metric"] = headline.metric
            frame["metric_label"] = headline.label
            frame["higher_is_better"] = headline.higher_is_better
            if headline.proportion:
                frame["lo"], frame["hi"] = wilson_percent(frame["value"], n, confidence)
                frame["interval"] = "Wilson"
            elif headline.resampling is not None and bootstrap is not None:
                frame["lo"], frame["hi"], frame["interval"] = _bootstrapped(
                    headline, frame, bootstrap, confidence
                )
            else:
                frame["lo"] = frame["hi"] = float("nan")
                frame["interval"] = ""
            frame = frame[frame["value"].notna()]
            parts.append(frame[COLUMNS])
    if not parts:
        return pd.DataFrame(columns=COLUMNS)
    return pd.concat(parts, ignore_index=True)


def _bootstrapped(
    headline: Headline, frame: pd.DataFrame, bootstrap: Bootstrap, confidence: float
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The bootstrap interval of each row whose case has exactly one outcomes block (a case
    averaged over replicate seeds has none: its items are not one sample), and its method."""
    assert headline.resampling is not None
    lo = np.full(len(frame), np.nan)
    hi = np.full(len(frame), np.nan)
    methods = [""] * len(frame)
    for i, case in enumerate(frame[CASE].itertuples(index=False, name=None)):
        blocks = bootstrap.items.get(tuple(case), [])
        if len(blocks) != 1:
            continue
        low, high, method = bootstrap_interval(
            headline.resampling(blocks[0]), confidence, bootstrap.n_resamples, bootstrap.seed
        )
        lo[i], hi[i] = headline.scale * low, headline.scale * high
        # the method, or why there is no interval (too few items, a degenerate bootstrap)
        methods[i] = f"{method} bootstrap" if np.isfinite(low) else method
    return lo, hi, methods


def _items(headline: Headline, values: pd.DataFrame, frame: pd.DataFrame, mask) -> np.ndarray:
    """How many items each value of a headline is a share of."""
    if headline.n_metric is None:
        return frame[headline.n_column].to_numpy(dtype="float64")
    count = values[headline.n_metric].to_numpy(dtype="float64")[mask]
    if not headline.n_share:
        return count
    shares = sum(values[m].to_numpy(dtype="float64")[mask] for m in headline.n_share)
    return np.round(count * shares / 100.0, 6)  # the shares are percent of the count


def percentiles(table: pd.DataFrame) -> pd.Series:
    """Where each row's model sits among the run's models on the same (task, set, condition,
    metric): the share of the others it does at least as well as, in percent (NaN when alone).
    "Well" follows the metric's direction."""
    key = ["task", "dataset", "condition", "metric"]
    signed = table["value"].where(table["higher_is_better"], -table["value"])
    counts = table.groupby(key, dropna=False)["value"].transform("size")
    # rank with ties at their lowest: others strictly worse + ties (minus itself)
    below = signed.groupby([table[k] for k in key], dropna=False).rank(method="max") - 1
    share = 100.0 * below / (counts - 1)
    return share.where(counts > 1)


def read_headline_table(path: Path) -> pd.DataFrame:
    """The CSV `vlstress headlines` writes, every column it must have checked."""
    from vlstress.errors import VlstressError

    if not Path(path).is_file():
        raise VlstressError(f"headline table not found: {path}; run `vlstress headlines` first")
    try:
        # read as `read_summary` reads the summary, so rows compare with the summary's
        table = pd.read_csv(
            path, keep_default_na=False, na_values=[""], dtype={"condition": str, "interval": str}
        )
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
        raise VlstressError(f"headline table {path} is not a readable CSV: {exc}") from None
    missing = [c for c in (*COLUMNS, "percentile") if c not in table.columns]
    if missing:
        raise VlstressError(
            f"headline table {path} lacks column(s) {', '.join(missing)}; "
            "re-run `vlstress headlines`"
        )
    return table


@dataclass(frozen=True)
class Interval:
    """A headline value's interval as a table cell shows it: bounds (NaN where none), the
    method or why there is none (the headline table's `interval`), and n."""

    lo: float
    hi: float
    method: str
    n: float


def intervals_by_case(table: pd.DataFrame) -> dict[tuple[str, ...], Interval]:
    """(model, dataset, task, condition, metric) -> its `Interval`, values in the headline's unit
    (the records' unit times `Headline.scale`)."""
    return {
        (*case_key(r.model, r.dataset, r.task, r.condition), str(r.metric)): Interval(
            float(r.lo), float(r.hi), "" if pd.isna(r.interval) else str(r.interval), float(r.n)
        )
        for r in table.itertuples(index=False)
    }


def case_key(model: object, dataset: object, task: object, condition: object) -> tuple[str, ...]:
    """A case as text, an empty condition (NaN as the summary reads it) as ""."""
    return tuple("" if pd.isna(v) else str(v) for v in (model, dataset, task, condition))


def items_by_case(summary: pd.DataFrame, task: str, column: str = "n_images") -> dict:
    """(model, dataset, task, condition) -> the items a task's record counted (`column` of the
    summary, the mean over replicate seeds), keyed as `case_key` makes them."""
    rows = summary[summary["task"] == task]
    counts = rows.groupby(CASE, sort=False, dropna=False)[column].mean()
    return {case_key(*case): float(n) for case, n in counts.items()}


def interval_bounds(
    rows: pd.DataFrame, headlines: pd.DataFrame | None, keys: list[str]
) -> dict[tuple, tuple[float, float, float]]:
    """(the rows' `keys` values) -> (value, lo, hi) of the headline table's interval of each row's
    case and metric (none without a table): what `figures.bar_intervals` draws. `rows`: summary
    rows (model, dataset, task, condition, metric, value)."""
    if headlines is None:
        return {}
    # only the rows' tasks and metrics: a figure's panels each ask, and the table holds the run's
    same = headlines["task"].isin(set(rows["task"])) & headlines["metric"].isin(set(rows["metric"]))
    intervals = intervals_by_case(headlines[same])
    out: dict[tuple, tuple[float, float, float]] = {}
    for row in rows.itertuples(index=False):
        found = intervals.get(
            (*case_key(row.model, row.dataset, row.task, row.condition), str(row.metric))
        )
        if found is not None:
            key = tuple(getattr(row, k) for k in keys)
            out[key] = (float(row.value), found.lo, found.hi)
    return out
