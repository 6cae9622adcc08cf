"""`vlstress stability-report`: the stability suite's tables (Markdown, LaTeX) and figure from the
summary, with mFR and relative mT5D against the params' baseline model, and the flip
probabilities' intervals from the headline table (`--headlines`)."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from vlstress.argtypes import optional_str

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--summary", required=True, type=Path, help="`vlstress summarize` CSV")
    parser.add_argument(
        "--headlines",
        type=Path,
        help="`vlstress headlines` CSV: the intervals of the flip probabilities",
    )
    parser.add_argument(
        "--baseline", type=optional_str, default=None, help="model slug (None = no relative)"
    )
    parser.add_argument("--out-md", required=True, type=Path, help="Markdown tables")
    parser.add_argument("--out-tex", required=True, type=Path, help="LaTeX tables (booktabs)")
    parser.add_argument("--out-fig", required=True, type=Path, help="figure (PNG; PDF beside)")


def run(args: argparse.Namespace) -> None:
    from vlstress import provenance
    from vlstress.io import sha256_file, write_text
    from vlstress.report import figures, records
    from vlstress.suites.stability import figures as stability_figures
    from vlstress.suites.stability import table

    summary = records.read_summary(args.summary)
    inputs = {str(args.summary): sha256_file(args.summary)}
    headlines = None
    if args.headlines is not None:
        from vlstress.report.headlines import read_headline_table

        headlines = read_headline_table(args.headlines)
        inputs[str(args.headlines)] = sha256_file(args.headlines)
    block = provenance.build("stability-report", {"baseline": args.baseline}, inputs=inputs)
    markdown, latex, notes = table.render(summary, block, args.baseline, headlines)
    for note in notes:
        log.info("%s", note)
    write_text(args.out_md, markdown)
    write_text(args.out_tex, latex)
    figures.setup()
    fig, _ = stability_figures.stability(summary, headlines)
    figures.save(fig, args.out_fig, block)
