"""`vlstress summarize`: an explicit list of metric records -> summary tables + DVC metrics.

The records: `--record PATH` (repeatable), or `--params FILE` (repeatable, merged left to right,
later files win): the records the workflow writes for those params
(`vlstress.pipeline.record_paths`). Never a folder scan: a stale record of a model or condition
the params no longer name cannot show up; a listed record that does not exist is an error. The
outputs (long and aggregated tables, Markdown, DVC metrics and plots): vlstress.report.summary.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from vlstress.report import summary

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_record_arguments(parser)
    summary.add_output_arguments(parser)


def add_record_arguments(parser: argparse.ArgumentParser) -> None:
    """`--record PATH` or `--params FILE` (each repeatable): the records a step reads."""
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--record", action="append", type=Path, help="a metric record file (repeatable)"
    )
    source.add_argument(
        "--params",
        action="append",
        type=Path,
        help="params file (repeatable, merged in order): the records these params produce",
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


def run(args: argparse.Namespace) -> None:
    paths = record_list(args)
    table, agg = summary.collect(paths, log)
    summary.write(
        table,
        agg,
        summary.provenance_block(paths, args.params),
        out_csv=args.out_csv,
        out_agg=args.out_agg,
        out_md=args.out_md,
        out_scores=args.out_scores,
        out_plot=args.out_plot,
    )
    summary.log_totals(table, agg, paths, log)
