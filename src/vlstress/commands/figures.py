"""`vlstress figures`: the paper's figures (PNG + PDF) from the summary table.

Writes `<out-dir>/<name>.png` and `<name>.pdf` for every entry of
`vlstress.figures.FIGURES`: recall_bars (R@1 original vs each stress condition),
false_r1_heatmap (model x condition), lambda_sweep (each condition group against the
task's sweep key, λ for the image variants; seed error bars), drop_vs_size (drop rate
against parameter count). Tasks come from the registry `vlstress.report.tasks`; a task
without records is left out with a note in the figure and a log line.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from vlstress.errors import VlstressError

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--summary", required=True, type=Path, help="long CSV from `vlstress summarize` (--out-csv)")
    parser.add_argument("--out-dir", required=True, type=Path, help="folder for <figure>.png and <figure>.pdf")
    parser.add_argument("--only", default=None, help="comma-separated figure names (default: all)")


def run(args: argparse.Namespace) -> None:
    from vlstress.report import figures
    from vlstress import provenance
    from vlstress.io import sha256_file
    from vlstress.report import records

    table = records.read_summary(args.summary)
    names = list(figures.FIGURES) if not args.only or args.only == "None" else [n.strip() for n in args.only.split(",")]
    unknown = [n for n in names if n not in figures.FIGURES]
    if unknown:
        raise VlstressError(f"unknown figure(s) {', '.join(unknown)}; known: {', '.join(figures.FIGURES)}")
    inputs = {str(args.summary): sha256_file(args.summary)}
    figures.setup()
    for name in names:
        fig, notes = figures.FIGURES[name](table)
        for note in notes:
            log.info("%s: %s", name, note)
        block = provenance.build("figures", {"summary": str(args.summary), "figure": name, "notes": notes}, inputs=inputs)
        figures.save(fig, args.out_dir / f"{name}.png", block)
        log.info("wrote %s.png/.pdf", args.out_dir / name)
