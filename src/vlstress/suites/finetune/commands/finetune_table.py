"""`vlstress finetune-table`: base model against its fine-tuned variants on every metric the run
has.

Reads the aggregated summary and the params (which models evaluate which fine-tuned weights:
a model whose `pretrained` is `results/finetune/<variant>/model.safetensors`), and the long
summary for the images behind each zero-shot top-1 (its Wilson interval). Writes a
Markdown table (values, then changes against the base in percentage points), the same as
CSV, and a LaTeX table (vlstress.suites.finetune.table).
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--params", action="append", required=True, type=Path, help="params file(s) of the run"
    )
    parser.add_argument(
        "--summary",
        required=True,
        type=Path,
        help="aggregated summary CSV (`vlstress summarize --out-agg`)",
    )
    parser.add_argument(
        "--counts",
        type=Path,
        default=None,
        help=(
            "long summary CSV (`vlstress summarize --out-csv`): the images of each zero-shot "
            "top-1, for its 95%% Wilson interval (without it: no intervals)"
        ),
    )
    parser.add_argument("--out-md", required=True, type=Path)
    parser.add_argument("--out-csv", required=True, type=Path)
    parser.add_argument("--out-tex", required=True, type=Path)


def run(args: argparse.Namespace) -> None:
    from vlstress.io import write_text
    from vlstress.params import Params
    from vlstress.suites.finetune.table import finetune_tables

    tables = finetune_tables(Params.load(args.params), args.params, args.summary, args.counts)
    for note in tables.notes:
        log.info("%s", note)
    write_text(args.out_md, tables.markdown)
    write_text(args.out_csv, tables.csv)
    write_text(args.out_tex, tables.latex)
