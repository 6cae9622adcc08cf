"""`vlstress summarize`: every metric record under a folder -> summary tables + DVC metrics.

Outputs:
- `--out-csv`   long table, one row per (record, metric): the per-seed rows;
- `--out-agg`   mean, std and n_seeds over variant seeds of every (model, condition, metric);
- `--out-md`    the aggregated table for humans (mean ± std);
- `--out-json`  nested model -> condition -> metric (mean; `<metric>_std`, `n_seeds`) for `dvc metrics show`
                (numbers only; its provenance is in the sidecar `<out-json>.json`);
- `--out-plot`  R@1 / false R@1 / drop rate per (model, direction, condition) for `dvc plots show`.
Missing stress families are simply absent from every output (nothing is invented).
"""

from __future__ import annotations

import argparse
import logging
import math
from pathlib import Path

import pandas as pd

from .. import provenance
from ..io import dumps_json, sidecar, write_json, write_text
from ..report import records

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--metrics-dir", required=True, type=Path, help="folder of <model>/<evaluation>.json records")
    parser.add_argument("--out-csv", required=True, type=Path, help="long table, one row per record and metric (per seed)")
    parser.add_argument("--out-agg", required=True, type=Path, help="mean/std/n_seeds over variant seeds (CSV)")
    parser.add_argument("--out-md", required=True, type=Path, help="aggregated table, Markdown")
    parser.add_argument("--out-json", required=True, type=Path, help="nested model -> condition -> metric (DVC metrics; provenance in <file>.json)")
    parser.add_argument("--out-plot", required=True, type=Path, help="R@1, false R@1, drop rate per case (DVC plots CSV)")


def _clean(value: float) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def metrics_json(agg: pd.DataFrame) -> dict:
    nested: dict = {}
    for row in agg.itertuples(index=False):
        entry = nested.setdefault(row.model, {}).setdefault(row.condition, {})
        entry[row.metric] = _clean(row.mean)
        if row.n_seeds > 1:
            entry[f"{row.metric}_std"] = _clean(row.std)
        entry["n_seeds"] = int(row.n_seeds)
    return nested


def _cell(mean: float, std: float, n: int) -> str:
    if math.isnan(mean):
        return "n/a"
    return f"{mean:.2f} ± {std:.2f}" if n > 1 and not math.isnan(std) else f"{mean:.2f}"


def markdown(agg: pd.DataFrame) -> str:
    frame = agg.assign(cell=[_cell(m, s, n) for m, s, n in zip(agg["mean"], agg["std"], agg["n_seeds"])])
    index = ["label", "condition_label", "n_seeds"]
    frame = frame.assign(n_seeds=frame.groupby(["model", "condition"])["n_seeds"].transform("max"))
    wide = frame.pivot(index=["model", "condition", *index], columns="metric", values="cell")
    wide = wide.reindex(pd.MultiIndex.from_frame(frame[["model", "condition", *index]].drop_duplicates()))
    wide = wide[sorted(wide.columns, key=records.metric_key)]
    wide = wide.droplevel(["model", "condition"]).reset_index().fillna("")
    wide = wide.rename(columns={"label": "model", "condition_label": "condition", "n_seeds": "seeds"})
    return wide.to_markdown(index=False, disable_numparse=True)


def plot_table(agg: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, direction, condition): the numbers `dvc plots show` draws as bars."""
    rows = []
    for (model, condition), group in agg.groupby(["label", "condition_label"], sort=False):
        stress = group["stress"].iloc[0]
        directions = ["i2t", "t2i"] if stress == "none" else [records.FAMILIES[stress].direction] if stress in records.FAMILIES else []
        values = dict(zip(group["metric"], group["mean"]))
        for direction in directions:
            if f"{direction}_R@1" not in values:
                continue
            rows.append(
                {
                    "case": f"{model} | {records.DIRECTIONS[direction]} | {condition}",
                    "model": model,
                    "direction": records.DIRECTIONS[direction],
                    "condition": condition,
                    "R@1": values.get(f"{direction}_R@1"),
                    "false_R@1": values.get(f"{direction}_false_R@1"),
                    "drop_rate": values.get(f"{direction}_drop_rate"),
                }
            )
    return pd.DataFrame(rows, columns=["case", "model", "direction", "condition", "R@1", "false_R@1", "drop_rate"])


def run(args: argparse.Namespace) -> None:
    table = records.collect(args.metrics_dir)
    agg = records.aggregate(table)
    present = sorted(set(table["stress"]) - {"none"})
    for stress, family in records.FAMILIES.items():
        if stress not in present:
            log.info("no %s records under %s: that family is absent from the summary", family.title, args.metrics_dir)
    block = provenance.build("summarize", {"metrics_dir": str(args.metrics_dir)})
    for path, frame in ((args.out_csv, table), (args.out_agg, agg), (args.out_plot, plot_table(agg))):
        write_text(path, frame.to_csv(index=False, lineterminator="\n"))
        write_json(sidecar(path), {"rows": len(frame), "columns": list(frame.columns), "provenance": block})
    write_text(args.out_md, f"{markdown(agg)}\n\n<!-- provenance\n{dumps_json(block)}-->\n")
    write_json(args.out_json, metrics_json(agg))  # numbers only: `dvc metrics show` lists every key
    write_json(sidecar(args.out_json), {"provenance": block})
    log.info(
        "summarized %d records of %d model(s), %d condition(s)",
        table.drop_duplicates(["model", "evaluation"]).shape[0],
        table["model"].nunique(),
        agg["condition"].nunique(),
    )
