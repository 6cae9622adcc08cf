"""`vlstress summarize`: every metric JSON under a folder -> one long table + DVC metrics.

Outputs: a CSV (one row per model, evaluation, metric), a Markdown table for
humans, and a nested JSON that `dvc metrics show` reads.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from .. import provenance
from ..errors import VlstressError
from ..io import dumps_json, read_json, write_json, write_text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--metrics-dir", required=True, type=Path, help="folder of <model>/<evaluation>.json files")
    parser.add_argument("--out-csv", required=True, type=Path)
    parser.add_argument("--out-md", required=True, type=Path)
    parser.add_argument("--out-json", required=True, type=Path, help="nested model -> evaluation -> metric (DVC metrics)")


def collect(metrics_dir: Path) -> pd.DataFrame:
    files = sorted(metrics_dir.glob("*/*.json"))
    if not files:
        raise VlstressError(f"no metric files under {metrics_dir}; run `vlstress evaluate` first")
    rows = []
    for path in files:
        record = read_json(path, "metric file")
        for metric, value in record["metrics"].items():
            rows.append(
                {
                    "model": record["model"],
                    "weights": record["weights"],
                    "arch": record["provenance"]["model"]["arch"],
                    "dataset": record["dataset"],
                    "evaluation": record["evaluation"],
                    "metric": metric,
                    "value": round(float(value), 4),
                }
            )
    return pd.DataFrame(rows).sort_values(["model", "evaluation", "metric"], kind="stable").reset_index(drop=True)


def run(args: argparse.Namespace) -> None:
    table = collect(args.metrics_dir)
    write_text(args.out_csv, table.to_csv(index=False, lineterminator="\n"))
    wide = table.pivot_table(index=["model", "weights", "evaluation"], columns="metric", values="value", sort=True).reset_index()
    block = provenance.build("summarize", {"metrics_dir": str(args.metrics_dir)})
    markdown = wide.to_markdown(index=False, floatfmt=".2f")
    write_text(args.out_md, f"{markdown}\n\n<!-- provenance\n{dumps_json(block)}-->\n")
    nested: dict = {}
    for row in table.itertuples():
        nested.setdefault(row.model, {}).setdefault(row.evaluation, {})[row.metric] = row.value
    nested["provenance"] = block
    write_json(args.out_json, nested)
