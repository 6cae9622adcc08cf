"""The summary of an explicit list of metric records (`vlstress summarize`): summary tables and
DVC metrics.

Outputs:
- long table (`--out-csv`), one row per (record, metric): the per-seed rows;
- aggregated table (`--out-agg`): mean, std and n_seeds over replicate seeds of every (model,
  task, condition, metric);
- the aggregated table for humans (`--out-md`): one table per task, its own metrics as columns
  (mean, ± std over replicate seeds; counts as integers; `–` where undefined or not measured);
- DVC metrics (`--out-scores`, a folder): one small file per (task, dataset, condition, model),
  `<task>/<dataset>/<condition>/<model>.json`, holding that case's metrics (mean; `<metric>_std` and
  `n_seeds` over replicate seeds), numbers or null only (strict JSON; provenance in the sidecar
  `<out-scores>.json`). `dvc metrics show` prints one row per file and one column per metric
  name, so a task's table (`dvc metrics show results/scores/zeroshot`) has the models of each
  condition side by side and a column per metric; `dvc metrics diff` names each case's path;
- R@1 / false R@1 / drop rate per (model, direction, condition) for `dvc plots show`
  (`--out-plot`).
A task without records is simply absent from every output (nothing is invented).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
from pathlib import Path

import pandas as pd

from vlstress import provenance
from vlstress.io import score_name, sha256_file, sidecar, write_scores, write_text
from vlstress.report import records
from vlstress.report.tasks import DIRECTIONS, TASKS, task_rank


def add_output_arguments(parser: argparse.ArgumentParser) -> None:
    """--out-csv, --out-agg, --out-md, --out-json, --out-plot (see the module docstring)."""
    parser.add_argument(
        "--out-csv",
        required=True,
        type=Path,
        help="long table, one row per record and metric (per seed)",
    )
    parser.add_argument(
        "--out-agg", required=True, type=Path, help="mean/std/n_seeds over replicate seeds (CSV)"
    )
    parser.add_argument("--out-md", required=True, type=Path, help="aggregated table, Markdown")
    parser.add_argument(
        "--out-scores",
        required=True,
        type=Path,
        help="DVC metrics: <task>/<dataset>/<condition>/<model>.json (provenance: <folder>.json)",
    )
    parser.add_argument(
        "--out-plot",
        required=True,
        type=Path,
        help="R@1, false R@1, drop rate per case (DVC plots CSV)",
    )


def _clean(value) -> float | int | None:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return None
    return value


def score_files(agg: pd.DataFrame) -> dict[str, dict]:
    """Relative path `<task>/<dataset>/<condition>/<model>.json` -> that case's metrics (DVC
    metrics: one row of `dvc metrics show` per case)."""
    files: dict[str, dict] = {}
    for row in agg.itertuples(index=False):
        entry = files.setdefault(score_name(row.task, row.dataset, row.condition, row.model), {})
        entry[row.metric] = _clean(float(row.mean))
        if row.n_seeds > 1:
            entry[f"{row.metric}_std"] = _clean(float(row.std))
        entry["n_seeds"] = max(int(row.n_seeds), entry.get("n_seeds", 0))
    return files


def strict_json(obj) -> str:
    return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


UNDEFINED = "–"
# a metric counting things (images, questions, decisions, queries): printed as an integer when
# every mean of its column is one
COUNT_PREFIXES = ("n_",)
COUNT_SUFFIXES = ("_decisions",)
COUNT_NAMES = ("queries",)
MARKDOWN_CAPTION = (
    "Every metric of the run, one table per task (its own metrics as columns): mean over "
    "replicate seeds, ± the sample std where a case has several (`seeds` says how many); "
    f"percentages as in the records, counts as integers; {UNDEFINED} where a value is undefined "
    "(e.g. a drop rate from an original R@1 of 0) or not measured for that row."
)


def is_count(metric: str, means: pd.Series) -> bool:
    """A count-like metric whose every defined mean is a whole number."""
    named = (
        metric.startswith(COUNT_PREFIXES)
        or metric.endswith(COUNT_SUFFIXES)
        or metric in COUNT_NAMES
    )
    defined = means.dropna()
    return named and bool(((defined - defined.round()).abs() < 1e-9).all())


def _cell(mean: float, std: float, n: int, digits: int = 2) -> str:
    if mean is None or math.isnan(mean):
        return UNDEFINED
    if n > 1 and not math.isnan(std):
        return f"{mean:.{digits}f} ± {std:.2f}"
    return f"{mean:.{digits}f}"


def task_frame(rows: pd.DataFrame) -> pd.DataFrame:
    """One task's rows (of the aggregated table) as a table: a row per (model, dataset,
    condition); a column per metric of the task; the dataset and condition columns only where
    they vary, `seeds` only where a case has several."""
    ids = ["model", "dataset", "condition"]
    rows = rows.assign(seeds=rows.groupby(ids, sort=False)["n_seeds"].transform("max"))
    digits = {m: 0 if is_count(m, g["mean"]) else 2 for m, g in rows.groupby("metric")}
    rows = rows.assign(
        cell=[
            _cell(m, s, n, digits[metric])
            for m, s, n, metric in zip(rows["mean"], rows["std"], rows["n_seeds"], rows["metric"])
        ]
    )
    cases = rows.drop_duplicates(ids)[[*ids, "label", "condition_label", "seeds"]]
    wide = rows.pivot(index=ids, columns="metric", values="cell")
    wide = wide.reindex(pd.MultiIndex.from_frame(cases[ids]))
    metrics = sorted(wide.columns, key=records.metric_key)
    frame = pd.DataFrame(
        {
            "model": cases["label"].to_numpy(),
            "dataset": cases["dataset"].astype(str).to_numpy(),
            "condition": cases["condition_label"].astype(str).to_numpy(),
            "seeds": cases["seeds"].astype(int).to_numpy(),
        }
    )
    for metric in metrics:
        frame[metric] = wide[metric].fillna(UNDEFINED).to_numpy()
    keep = ["model"]
    keep += ["dataset"] if frame["dataset"].nunique() > 1 else []
    keep += ["condition"] if frame["condition"].nunique() > 1 else []
    keep += ["seeds"] if (frame["seeds"] > 1).any() else []
    return frame[[*keep, *metrics]]


def _task_heading(task: str, rows: pd.DataFrame) -> str:
    """`### <title> (`task`): data <sets>[; condition <label>]` (the condition where the task
    has one only)."""
    info = TASKS.get(task)
    title = info.title if info else task
    datasets = ", ".join(dict.fromkeys(rows["dataset"].astype(str)))
    labels = list(dict.fromkeys(rows["condition_label"].astype(str)))
    single = f"; condition {labels[0]}" if len(labels) == 1 else ""
    return f"### {title} (`{task}`): data {datasets}{single}"


def markdown(agg: pd.DataFrame) -> str:
    """The caption, then one pipe table per task in registry order."""
    parts = [MARKDOWN_CAPTION]
    for task in sorted(dict.fromkeys(agg["task"]), key=task_rank):
        rows = agg[agg["task"] == task]
        table = task_frame(rows).to_markdown(index=False, disable_numparse=True)
        parts.append(f"{_task_heading(task, rows)}\n\n{table}")
    return "\n\n".join(parts)


def plot_table(agg: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, direction, condition): the numbers `dvc plots show` draws as bars."""
    rows = []
    for (model, task, condition), group in agg.groupby(
        ["label", "task", "condition_label"], sort=False
    ):
        info = TASKS.get(task)
        values = dict(zip(group["metric"], group["mean"]))
        for direction in info.directions if info else ():
            if f"{direction}_R@1" not in values:
                continue
            rows.append(
                {
                    "case": f"{model} | {DIRECTIONS[direction]} | {condition}",
                    "model": model,
                    "direction": DIRECTIONS[direction],
                    "condition": condition,
                    "R@1": values.get(f"{direction}_R@1"),
                    "false_R@1": values.get(f"{direction}_false_R@1"),
                    "drop_rate": values.get(f"{direction}_drop_rate"),
                }
            )
    return pd.DataFrame(
        rows, columns=["case", "model", "direction", "condition", "R@1", "false_R@1", "drop_rate"]
    )


def collect(paths: list[Path], log: logging.Logger) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(long table, aggregated table) of the records `paths`; `log` says which tasks have no
    record and which have no display info."""
    table = records.collect(paths)
    agg = records.aggregate(table)
    present = set(table["task"])
    for name, task in TASKS.items():
        if name not in present:
            log.info(
                "no %s records among the %d given: that task is absent from the summary",
                task.title,
                len(paths),
            )
    unknown = sorted(present - set(TASKS))
    if unknown:
        log.info(
            "task(s) without display info in vlstress.report.tasks: %s (summarized as they are)",
            ", ".join(unknown),
        )
    return table, agg


def provenance_block(paths: list[Path], params_files: list[Path] | None) -> dict:
    """The provenance of every output: the params files (when the records come from them) and
    the records, each with its sha256."""
    given = {"params": [str(p) for p in params_files]} if params_files else {}
    return provenance.build(
        "summarize",
        {**given, "records": [str(p) for p in paths]},
        inputs={str(p): sha256_file(p) for p in paths},
    )


def write(
    table: pd.DataFrame,
    agg: pd.DataFrame,
    block: dict,
    *,
    out_csv: Path,
    out_agg: Path,
    out_md: Path,
    out_scores: Path,
    out_plot: Path,
) -> None:
    """Write every output (see the module docstring), each with the provenance `block`."""
    for path, frame in (
        (out_csv, table),
        (out_agg, agg),
        (out_plot, plot_table(agg)),
    ):
        write_text(path, frame.to_csv(index=False, lineterminator="\n"))
        write_text(
            sidecar(path),
            strict_json({"rows": len(frame), "columns": list(frame.columns), "provenance": block}),
        )
    write_text(out_md, f"{markdown(agg)}\n\n<!-- provenance\n{strict_json(block)}-->\n")
    # numbers only: `dvc metrics show` lists every key
    files = score_files(agg)
    write_scores(out_scores, files)
    write_text(sidecar(out_scores), strict_json({"files": sorted(files), "provenance": block}))


def log_totals(
    table: pd.DataFrame, agg: pd.DataFrame, paths: list[Path], log: logging.Logger
) -> None:
    """One log line: how many records, models, tasks and conditions were summarized."""
    log.info(
        "summarized %d records of %d model(s), %d task(s), %d condition(s)",
        len(paths),
        table["model"].nunique(),
        table["task"].nunique(),
        agg.drop_duplicates(["task", "condition"]).shape[0],
    )
