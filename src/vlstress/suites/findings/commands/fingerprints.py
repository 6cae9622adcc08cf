"""`vlstress fingerprints`: robustness fingerprints of model attributes.

From the long summary table (`vlstress summarize`): every headline metric of the run against each
model's in-distribution zero-shot top-1, each model attribute's group offset from the pooled line
with a bootstrap interval and Holm's correction (vlstress.suites.findings.fingerprints). Writes the
table (CSV, Markdown, LaTeX), the numbers (JSON) and two figures (PNG + PDF)."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--summary", required=True, type=Path, help="long CSV of `vlstress summarize`"
    )
    parser.add_argument(
        "--in-distribution",
        required=True,
        help="the zero-shot test set whose top-1 is every line's x axis",
    )
    parser.add_argument(
        "--attributes",
        required=True,
        help="comma-separated model attributes to group by (family, tower, ..., size)",
    )
    parser.add_argument(
        "--min-group", type=int, default=3, help="a group of fewer models is not tested"
    )
    parser.add_argument(
        "--bootstrap", type=int, default=1000, help="BCa bootstrap resamples per group offset"
    )
    parser.add_argument("--confidence", type=float, default=0.95, help="of every interval")
    parser.add_argument("--seed", type=int, default=0, help="of the bootstrap")
    parser.add_argument("--out-csv", required=True, type=Path, help="every row, CSV")
    parser.add_argument("--out-md", required=True, type=Path, help="table, Markdown")
    parser.add_argument("--out-tex", required=True, type=Path, help="table, LaTeX (longtable)")
    parser.add_argument(
        "--out-json", required=True, type=Path, help="rows, lines, notes and provenance (JSON)"
    )
    parser.add_argument(
        "--out-fig", required=True, type=Path, help="forest plot of the offsets (PNG, PDF beside)"
    )
    parser.add_argument(
        "--out-lines",
        required=True,
        type=Path,
        help="the lines of the first grouping, by series (PNG, PDF beside)",
    )


def run(args: argparse.Namespace) -> None:
    from vlstress import provenance
    from vlstress.errors import VlstressError
    from vlstress.io import sha256_file, write_json, write_text
    from vlstress.report import figures, headlines, records
    from vlstress.suites.findings import fingerprint_figures, fingerprint_report
    from vlstress.suites.findings.fingerprints import Settings, fingerprints
    from vlstress.suites.findings.params import GROUPINGS

    attributes = tuple(name.strip() for name in args.attributes.split(",") if name.strip())
    unknown = [name for name in attributes if name not in GROUPINGS]
    if unknown or not attributes:
        raise VlstressError(
            f"--attributes: unknown model attribute(s) {', '.join(unknown) or '(none given)'};"
            f" choose from {', '.join(GROUPINGS)}"
        )
    settings = Settings(
        in_distribution=args.in_distribution,
        attributes=attributes,
        min_group=args.min_group,
        n_resamples=args.bootstrap,
        confidence=args.confidence,
        seed=args.seed,
    )
    table = headlines.headline_table(records.read_summary(args.summary), args.confidence)
    result = fingerprints(table, settings)
    for note in result.notes:
        log.info("%s", note)
    block = provenance.build(
        "fingerprints",
        {
            "summary": str(args.summary),
            "in_distribution": settings.in_distribution,
            "attributes": list(attributes),
            "min_group": settings.min_group,
            "bootstrap": settings.n_resamples,
            "confidence": settings.confidence,
            "notes": result.notes,
        },
        seed=settings.seed,
        inputs={str(args.summary): sha256_file(args.summary)},
        packages=("scipy", "statsmodels"),
    )
    write_text(args.out_csv, fingerprint_report.csv_text(result))
    write_text(args.out_md, fingerprint_report.markdown(result, block))
    write_text(args.out_tex, fingerprint_report.latex(result, block))
    write_json(args.out_json, fingerprint_report.numbers(result, block))
    figures.setup()
    figures.save(fingerprint_figures.forest(result), args.out_fig, block)
    figures.save(fingerprint_figures.lines(result), args.out_lines, block)
    log.info(
        "%d finding(s) among %d tested offsets, %d model(s)",
        len(result.findings),
        result.n_tested,
        result.n_models,
    )
