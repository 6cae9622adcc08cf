"""`vlstress summarize`: an explicit list of metric records -> summary tables + DVC metrics.

Inputs, exactly one of:
- `--record PATH` (repeatable): these record files;
- `--params FILE` (repeatable, merged left to right, later files win): the records the
  workflow writes for those params (`vlstress.pipeline.record_paths`).
Never a folder scan: a stale record of a model or condition the params no longer name
cannot show up. A listed record that does not exist is an error.

Outputs:
- `--out-csv`   long table, one row per (record, metric): the per-seed rows;
- `--out-agg`   mean, std and n_seeds over replicate seeds of every (model, task, condition,
                metric);
- `--out-md`    the aggregated table for humans (mean ± std);
- `--out-json`  nested model -> task -> condition -> metric (mean; `<metric>_std`, `n_seeds`) for
                `dvc metrics show` (numbers or null only, strict JSON; provenance in the sidecar
                `<out-json>.json`);
- `--out-plot`  R@1 / false R@1 / drop rate per (model, direction, condition) for `dvc plots show`.
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
from vlstress.io import sha256_file, sidecar, write_text
from vlstress.report import records
from vlstress.report.tasks import DIRECTIONS, TASKS

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--record", action="append", type=Path, help="a metric record file (repeatable)"
    )
    source.add_argument(
        "--params",
        action="append",
        type=Path,
        help=(
            "params file (repeatable, merged left to right): summarize the records these params "
            "produce"
        ),
    )
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
        "--out-json",
        required=True,
        type=Path,
        help="nested model -> task -> condition -> metric (DVC metrics; provenance in <file>.json)",
    )
    parser.add_argument(
        "--out-plot",
        required=True,
        type=Path,
        help="R@1, false R@1, drop rate per case (DVC plots CSV)",
    )


def record_list(args: argparse.Namespace) -> list[Path]:
    if args.record:
        return list(args.record)
    from vlstress import params as params_module
    from vlstress import params_check
    from vlstress.pipeline import record_paths

    merged = params_module.load(args.params)
    params_check.validate(merged, ", ".join(str(p) for p in args.params))
    return record_paths(merged)


def _clean(value) -> float | int | None:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return None
    return value


def metrics_json(agg: pd.DataFrame) -> dict:
    nested: dict = {}
    for row in agg.itertuples(index=False):
        entry = (
            nested.setdefault(row.model, {}).setdefault(row.task, {}).setdefault(row.condition, {})
        )
        entry[row.metric] = _clean(float(row.mean))
        if row.n_seeds > 1:
            entry[f"{row.metric}_std"] = _clean(float(row.std))
        entry["n_seeds"] = int(row.n_seeds)
    return nested


def _strict_json(obj) -> str:
    return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def _cell(mean: float, std: float, n: int) -> str:
    if math.isnan(mean):
        return "n/a"
    return f"{mean:.2f} ± {std:.2f}" if n > 1 and not math.isnan(std) else f"{mean:.2f}"


def markdown(agg: pd.DataFrame) -> str:
    frame = agg.assign(
        cell=[_cell(m, s, n) for m, s, n in zip(agg["mean"], agg["std"], agg["n_seeds"])]
    )
    ids = ["model", "dataset", "task", "condition"]
    shown = ["label", "condition_label", "n_seeds"]
    frame = frame.assign(n_seeds=frame.groupby(ids)["n_seeds"].transform("max"))
    wide = frame.pivot(index=[*ids, *shown], columns="metric", values="cell")
    wide = wide.reindex(pd.MultiIndex.from_frame(frame[[*ids, *shown]].drop_duplicates()))
    metrics = sorted(wide.columns, key=records.metric_key)
    wide = wide.droplevel(["model", "dataset", "condition"]).reset_index().fillna("")
    wide = wide[["label", "task", "condition_label", "n_seeds", *metrics]]
    wide = wide.rename(
        columns={"label": "model", "condition_label": "condition", "n_seeds": "seeds"}
    )
    return wide.to_markdown(index=False, disable_numparse=True)


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


def run(args: argparse.Namespace) -> None:
    paths = record_list(args)
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
    given = {"params": [str(p) for p in args.params]} if args.params else {}
    block = provenance.build(
        "summarize",
        {**given, "records": [str(p) for p in paths]},
        inputs={str(p): sha256_file(p) for p in paths},
    )
    for path, frame in (
        (args.out_csv, table),
        (args.out_agg, agg),
        (args.out_plot, plot_table(agg)),
    ):
        write_text(path, frame.to_csv(index=False, lineterminator="\n"))
        write_text(
            sidecar(path),
            _strict_json({"rows": len(frame), "columns": list(frame.columns), "provenance": block}),
        )
    write_text(args.out_md, f"{markdown(agg)}\n\n<!-- provenance\n{_strict_json(block)}-->\n")
    # numbers only: `dvc metrics show` lists every key
    write_text(args.out_json, _strict_json(metrics_json(agg)))
    write_text(sidecar(args.out_json), _strict_json({"provenance": block}))
    log.info(
        "summarized %d records of %d model(s), %d task(s), %d condition(s)",
        len(paths),
        table["model"].nunique(),
        table["task"].nunique(),
        agg.drop_duplicates(["task", "condition"]).shape[0],
    )
