"""`vlstress cards`: a static HTML robustness card per model and an index comparing them
(vlstress.suites.findings.cards), and the run's headline table with intervals (CSV, Markdown).

The records behind the numbers, which each card links to: `--record PATH` (repeatable) or
`--params FILE` (repeatable, merged in order), exactly as `vlstress summarize` takes them.
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
    parser.add_argument(
        "--confidence", type=float, default=0.95, help="of every interval (default 0.95)"
    )
    parser.add_argument(
        "--out-dir", required=True, type=Path, help="folder of the cards (replaced as a whole)"
    )
    parser.add_argument("--out-csv", required=True, type=Path, help="headline table, CSV")
    parser.add_argument("--out-md", required=True, type=Path, help="headline table, Markdown")


def run(args: argparse.Namespace) -> None:
    from vlstress import provenance
    from vlstress.commands.summarize import record_list
    from vlstress.errors import VlstressError
    from vlstress.io import sha256_file, write_text
    from vlstress.report.records import read_records, read_summary
    from vlstress.suites.findings import cards, headline_tables, headlines

    if not 0.5 < args.confidence < 1:
        raise VlstressError(f"--confidence {args.confidence}: expected a number in (0.5, 1)")
    summary = read_summary(args.summary)
    found = read_records(record_list(args))
    digest = sha256_file(args.summary)
    block = provenance.build(
        "cards",
        {
            "summary": str(args.summary),
            "confidence": args.confidence,
            "params_files": [str(p) for p in args.params or []],
            "records": len(found),
        },
        inputs={str(args.summary): digest},
        packages=("jinja2", "matplotlib", "statsmodels"),
    )
    pages = cards.pages(
        summary,
        found,
        args.out_dir,
        confidence=args.confidence,
        summary_sha256=digest,
        provenance=block,
    )
    table = headlines.headline_table(summary, args.confidence)
    cards.write_pages(args.out_dir, pages)
    write_text(args.out_csv, headline_tables.headlines_csv(table))
    write_text(args.out_md, headline_tables.headlines_markdown(table, args.confidence))
    log.info("%d card(s) and an index in %s", len(pages) - 1, args.out_dir)
