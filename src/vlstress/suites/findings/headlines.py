"""The headline metrics of a run: one row per (model, task, set, condition, headline metric) of the
summary, the tasks' `headlines` declarations applied, with a 95% interval where one is defined.

Proportions (top-1, R@1, attack success, shape bias) get Wilson's interval over the items the
record counted; a metric whose interval needs the per-item outcomes (ECE, AUROC, FPR@95, flip
probability, error ratios) has none here, and says so (`interval` is empty)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from vlstress.report import tasks
from vlstress.report.display import Headline
from vlstress.report.intervals import wilson_percent
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


def headline_table(summary: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Every headline row of the summary (mean over replicate seeds), with its interval."""
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
            else:
                frame["lo"] = frame["hi"] = float("nan")
                frame["interval"] = ""
            frame = frame[frame["value"].notna()]
            parts.append(frame[COLUMNS])
    if not parts:
        return pd.DataFrame(columns=COLUMNS)
    return pd.concat(parts, ignore_index=True)


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
