"""`vlstress headlines`: every headline metric of the run with n and its interval
(vlstress.report.headlines) and where each model stands among the run's models, as CSV and
Markdown. The suites' tables and the robustness cards read the CSV: an interval is computed once.

The records behind the numbers: `--record PATH` (repeatable) or `--params FILE` (repeatable, merged
in order), exactly as `vlstress summarize` takes them. Their per-item outcomes (bootstrap
intervals): those the params' stages write, or `--outcomes PATH` (repeatable) with `--record`.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from vlstress.commands.summarize import add_record_arguments

    add_record_arguments(parser)
    parser.add_argument(
        "--summary", required=True, type=Path, help="long CSV of `vlstress summarize`"
    )
    add_outcome_argument(parser)
    add_interval_arguments(parser)
    parser.add_argument("--out-csv", required=True, type=Path, help="headline table, CSV")
    parser.add_argument("--out-md", required=True, type=Path, help="headline table, Markdown")


def add_outcome_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--outcomes",
        action="append",
        type=Path,
        default=[],
        help="a per-item outcomes file (<record stem>.outcomes.npz) of a --record (repeatable)",
    )


def add_interval_arguments(parser: argparse.ArgumentParser) -> None:
    """`--confidence`, `--bootstrap`, `--seed`: how every interval of the run is computed."""
    parser.add_argument(
        "--confidence", type=float, default=0.95, help="of every interval (default 0.95)"
    )
    parser.add_argument(
        "--bootstrap", type=int, default=1000, help="bootstrap resamples (default 1000)"
    )
    parser.add_argument("--seed", type=int, default=0, help="of the bootstrap (default 0)")


def check_interval_arguments(args: argparse.Namespace) -> None:
    from vlstress.errors import VlstressError

    if not 0.5 < args.confidence < 1:
        raise VlstressError(f"--confidence {args.confidence}: expected a number in (0.5, 1)")
    if args.bootstrap < 100:
        raise VlstressError(f"--bootstrap {args.bootstrap}: expected at least 100 resamples")


def outcome_list(args: argparse.Namespace) -> list[Path]:
    """The outcomes files the params' stages write, or those given with `--outcomes`."""
    if not args.params:
        return list(args.outcomes)
    from vlstress import params as params_module
    from vlstress.pipeline import outcome_paths

    return outcome_paths(params_module.load(args.params))


def run(args: argparse.Namespace) -> None:
    from vlstress import provenance
    from vlstress.commands.summarize import record_list
    from vlstress.io import sha256_file, write_text
    from vlstress.report import headline_tables, headlines, items
    from vlstress.report.records import read_records, read_summary

    check_interval_arguments(args)
    summary = read_summary(args.summary)
    found = read_records(record_list(args))
    by_case = items.case_outcomes(found, outcome_list(args))
    block = provenance.build(
        "headlines",
        {
            "summary": str(args.summary),
            "confidence": args.confidence,
            "params_files": [str(p) for p in args.params or []],
            "records": len(found),
            "outcomes": len(by_case),
            "bootstrap": args.bootstrap,
        },
        seed=args.seed,
        inputs={str(args.summary): sha256_file(args.summary)},
        packages=("scipy", "statsmodels"),
    )
    resampling = headlines.Bootstrap(by_case, args.bootstrap, args.seed)
    table = headlines.headline_table(summary, args.confidence, resampling)
    write_text(args.out_csv, headline_tables.headlines_csv(table))
    write_text(args.out_md, headline_tables.headlines_markdown(table, args.confidence, block))
    log.info(
        "%d headline value(s), %d with an interval: %s",
        len(table),
        int(table["lo"].notna().sum()),
        args.out_csv,
    )
