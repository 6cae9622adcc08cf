"""`vlstress figures`: the figures of one suite's figure module (PNG + PDF) from the summary table.

`--module` names the module (e.g. `vlstress.suites.calibration.figures`); its `FIGURES` maps each
name to a function of the long summary table that returns (figure, notes). Writes
`<out-dir>/<name>.png` and `<name>.pdf` for each of `--only` (default: all); with `--headlines`
(the CSV of `vlstress headlines`), a function that takes `headlines` draws its intervals. A suite
without records gets a placeholder figure that says so, and a log line. The drawing:
vlstress.report.figure_set.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from vlstress.argtypes import optional_names, suite_module

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--summary", required=True, type=Path, help="long CSV from `vlstress summarize` (--out-csv)"
    )
    parser.add_argument(
        "--module", required=True, type=suite_module, help="a suite's figure module (with FIGURES)"
    )
    parser.add_argument(
        "--out-dir", required=True, type=Path, help="folder for <figure>.png and <figure>.pdf"
    )
    parser.add_argument(
        "--headlines",
        type=Path,
        help="headline table of `vlstress headlines`: the intervals the figures draw",
    )
    parser.add_argument(
        "--only",
        type=optional_names,
        default=None,
        help="comma-separated figure names (default: all)",
    )


def run(args: argparse.Namespace) -> None:
    import importlib

    from vlstress.report import figure_set, records

    available = importlib.import_module(args.module).FIGURES
    table = records.read_summary(args.summary)
    names = figure_set.figure_names(available, args.only, args.module)
    headlines = None
    if args.headlines is not None:
        from vlstress.report.headlines import read_headline_table

        headlines = (args.headlines, read_headline_table(args.headlines))
    figure_set.draw(available, names, table, args.summary, args.out_dir, log, headlines)
