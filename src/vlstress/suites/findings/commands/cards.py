"""`vlstress cards`: a static HTML robustness card per model and an index comparing them
(vlstress.suites.findings.cards), the run's headline table with intervals, and the paired
comparisons of models on the same items (CSV, Markdown).

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
    from vlstress.commands.summarize import add_record_arguments

    add_record_arguments(parser)
    parser.add_argument(
        "--summary", required=True, type=Path, help="long CSV of `vlstress summarize`"
    )
    parser.add_argument(
        "--outcomes",
        action="append",
        type=Path,
        default=[],
        help="a per-item outcomes file (<record stem>.outcomes.npz) of a --record (repeatable)",
    )
    parser.add_argument(
        "--confidence", type=float, default=0.95, help="of every interval (default 0.95)"
    )
    parser.add_argument(
        "--bootstrap", type=int, default=1000, help="bootstrap resamples (default 1000)"
    )
    parser.add_argument("--seed", type=int, default=0, help="of the bootstrap (default 0)")
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
    parser.add_argument("--out-csv", required=True, type=Path, help="headline table, CSV")
    parser.add_argument("--out-md", required=True, type=Path, help="headline table, Markdown")
    parser.add_argument(
        "--out-comparisons-csv", required=True, type=Path, help="paired comparisons, CSV"
    )
    parser.add_argument(
        "--out-comparisons-md", required=True, type=Path, help="paired comparisons, Markdown"
    )


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
    from vlstress.errors import VlstressError
    from vlstress.io import sha256_file, write_text
    from vlstress.report.records import read_records, read_summary
    from vlstress.suites.findings import cards, comparisons, headline_tables, headlines, items

    if not 0.5 < args.confidence < 1:
        raise VlstressError(f"--confidence {args.confidence}: expected a number in (0.5, 1)")
    if args.bootstrap < 100:
        raise VlstressError(f"--bootstrap {args.bootstrap}: expected at least 100 resamples")
    summary = read_summary(args.summary)
    pairing = comparisons.pairing_for(args.compare, summary)
    found = read_records(record_list(args))
    by_case = items.case_outcomes(found, outcome_list(args))
    digest = sha256_file(args.summary)
    block = provenance.build(
        "cards",
        {
            "summary": str(args.summary),
            "confidence": args.confidence,
            "params_files": [str(p) for p in args.params or []],
            "records": len(found),
            "outcomes": len(by_case),
            "bootstrap": args.bootstrap,
            "compare": args.compare,
        },
        seed=args.seed,
        inputs={str(args.summary): digest},
        packages=("jinja2", "matplotlib", "scipy", "statsmodels"),
    )
    resampling = headlines.Bootstrap(by_case, args.bootstrap, args.seed)
    table = headlines.headline_table(summary, args.confidence, resampling)
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
    write_text(args.out_csv, headline_tables.headlines_csv(table))
    write_text(args.out_md, headline_tables.headlines_markdown(table, args.confidence))
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
