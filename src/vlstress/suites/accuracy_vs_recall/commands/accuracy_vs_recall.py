"""`vlstress accuracy-vs-recall`: zero-shot top-1 against retrieval R@1 across the models of a run.

From the long summary table (`vlstress summarize`): per retrieval condition (each direction, the
original gallery and every stress condition), a least-squares line and Pearson's and Spearman's
correlation over the models (vlstress.suites.accuracy_vs_recall.correlation). Writes the table
(Markdown, LaTeX), the numbers (JSON, DVC metrics) and the scatter (PNG + PDF).
"""

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
        "--testset", required=True, help="the zero-shot test set whose top-1 is the x axis"
    )
    parser.add_argument("--out-md", required=True, type=Path, help="table, Markdown")
    parser.add_argument("--out-tex", required=True, type=Path, help="table, LaTeX")
    parser.add_argument("--out-json", required=True, type=Path, help="the fits (DVC metrics)")
    parser.add_argument("--out-fig", required=True, type=Path, help="scatter (PNG, PDF beside it)")


def run(args: argparse.Namespace) -> None:
    import math
    from dataclasses import asdict

    from vlstress import provenance
    from vlstress.io import sha256_file, write_json, write_text
    from vlstress.report import figures, records
    from vlstress.report.frames import render_frames
    from vlstress.suites.accuracy_vs_recall import correlation, report

    pairs = correlation.paired(records.aggregate(records.read_summary(args.summary)), args.testset)
    found, notes = correlation.fits(pairs)
    for note in notes:
        log.info("%s", note)
    block = provenance.build(
        "accuracy-vs-recall",
        {"summary": str(args.summary), "testset": args.testset, "notes": notes},
        inputs={str(args.summary): sha256_file(args.summary)},
        packages=("scipy",),
    )
    table = report.frame(found)
    markdown, latex, _ = render_frames(
        "accuracy_vs_recall", report.CAPTION, table if found else None, block
    )
    markdown = markdown.replace(
        "\n\n<!-- provenance",
        "".join(f"\n\n_Note: {n}._" for n in notes) + "\n\n<!-- provenance",
        1,
    )
    write_text(args.out_md, markdown)
    write_text(args.out_tex, latex)
    numbers = [
        {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in asdict(item).items()}
        for item in found
    ]
    write_json(
        args.out_json,
        {"testset": args.testset, "fits": numbers, "notes": notes, "provenance": block},
    )
    figures.setup()
    figures.save(report.figure(pairs, found, args.testset, notes), args.out_fig, block)
    log.info("%d condition(s) over %d model(s)", len(found), pairs["model"].nunique())
