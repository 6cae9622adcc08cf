"""`vlstress cards`: a static HTML robustness card per model and an index comparing them
(vlstress.suites.findings.cards) from the run's headline table (`vlstress headlines`), and the
paired comparisons of models on the same items (CSV, Markdown).

The records behind the numbers, which each card links to: `--record PATH` (repeatable) or
`--params FILE` (repeatable, merged in order), exactly as `vlstress summarize` takes them. Their
per-item outcomes (bootstrap intervals, paired tests): those the params' stages write, or
`--outcomes PATH` (repeatable) with `--record`.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from vlstress.commands.headlines import add_interval_arguments, add_outcome_argument
    from vlstress.commands.summarize import add_record_arguments

    add_record_arguments(parser)
    parser.add_argument(
        "--summary", required=True, type=Path, help="long CSV of `vlstress summarize`"
    )
    parser.add_argument(
        "--headlines", required=True, type=Path, help="headline table of `vlstress headlines`"
    )
    add_outcome_argument(parser)
    add_interval_arguments(parser)
    parser.add_argument(
        "--compare",
        default="all",
        help="which models the paired comparisons pair: all (every pair), base (each fine-tuned"
        " variant with its base) or comma-separated reference model slugs (every model with each;"
        " default all)",
    )
    parser.add_argument(
        "--out-dir", required=True, type=Path, help="folder of the cards (replaced as a whole)"
    )
    parser.add_argument(
        "--out-comparisons-csv", required=True, type=Path, help="paired comparisons, CSV"
    )
    parser.add_argument(
        "--out-comparisons-md", required=True, type=Path, help="paired comparisons, Markdown"
    )


def run(args: argparse.Namespace) -> None:
    from vlstress import provenance
    from vlstress.commands.headlines import check_interval_arguments, outcome_list
    from vlstress.commands.summarize import record_list
    from vlstress.io import sha256_file, write_text
    from vlstress.report import items
    from vlstress.report.headlines import read_headline_table
    from vlstress.report.records import read_records, read_summary
    from vlstress.suites.findings import cards, comparisons

    check_interval_arguments(args)
    summary = read_summary(args.summary)
    pairing = comparisons.pairing_for(args.compare, summary)
    found = read_records(record_list(args))
    by_case = items.case_outcomes(found, outcome_list(args))
    digest = sha256_file(args.summary)
    table = read_headline_table(args.headlines)
    block = provenance.build(
        "cards",
        {
            "summary": str(args.summary),
            "headlines": str(args.headlines),
            "confidence": args.confidence,
            "params_files": [str(p) for p in args.params or []],
            "records": len(found),
            "outcomes": len(by_case),
            "bootstrap": args.bootstrap,
            "compare": args.compare,
        },
        seed=args.seed,
        inputs={str(args.summary): digest, str(args.headlines): sha256_file(args.headlines)},
        packages=("jinja2", "matplotlib", "scipy", "statsmodels"),
    )
    pages = cards.pages(
        summary,
        table,
        found,
        args.out_dir,
        confidence=args.confidence,
        summary_sha256=digest,
        provenance=block,
    )
    paired = comparisons.comparison_table(
        by_case, args.confidence, args.bootstrap, args.seed, pairing
    )
    cards.write_pages(args.out_dir, pages)
    write_text(args.out_comparisons_csv, comparisons.comparisons_csv(paired))
    write_text(
        args.out_comparisons_md,
        comparisons.comparisons_markdown(
            paired, args.confidence, comparisons.condition_labels(summary), pairing
        ),
    )
    log.info("%d card(s) and an index in %s", len(pages) - 1, args.out_dir)
    log.info(
        "%d paired comparison(s), %d significant after Holm's correction",
        len(paired),
        int(paired["significant"].sum()) if len(paired) else 0,
    )
