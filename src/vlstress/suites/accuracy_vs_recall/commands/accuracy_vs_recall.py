"""`vlstress accuracy-vs-recall`: zero-shot top-1 against retrieval R@1 across the models of a run.

From the long summary table (`vlstress summarize`): per retrieval condition (each direction, the
original gallery and every stress condition), a least-squares line and Pearson's and Spearman's
correlation over the models (vlstress.suites.accuracy_vs_recall.correlation). Writes the table
(Markdown, LaTeX), the numbers (JSON, and a folder of DVC metrics with one file per fit) of
vlstress.suites.accuracy_vs_recall.outputs, and the scatter (PNG + PDF), each condition's line
with its bootstrap band (vlstress.suites.accuracy_vs_recall.band).
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
    parser.add_argument(
        "--out-json", required=True, type=Path, help="the fits, the notes, the provenance (JSON)"
    )
    parser.add_argument(
        "--out-scores",
        required=True,
        type=Path,
        help="folder of DVC metrics: <task>/<direction>/<condition>.json, one fit each",
    )
    parser.add_argument("--out-fig", required=True, type=Path, help="scatter (PNG, PDF beside it)")


def run(args: argparse.Namespace) -> None:
    from vlstress import provenance
    from vlstress.io import sha256_file, write_json, write_scores, write_text
    from vlstress.report import figures, records
    from vlstress.suites.accuracy_vs_recall import band, correlation, outputs, report

    table = records.read_summary(args.summary)
    pairs = correlation.paired(records.aggregate(table), args.testset)
    epsilon = band.half_item(table, args.testset)
    found, notes = correlation.fits(pairs, epsilon)
    for note in notes:
        log.info("%s", note)
    block = provenance.build(
        "accuracy-vs-recall",
        {"summary": str(args.summary), "testset": args.testset, "notes": notes},
        inputs={str(args.summary): sha256_file(args.summary)},
        packages=("scipy",),
    )
    markdown, latex = outputs.tables(found, notes, block)
    write_text(args.out_md, markdown)
    write_text(args.out_tex, latex)
    write_json(args.out_json, outputs.numbers(args.testset, found, notes, block))
    write_scores(args.out_scores, outputs.scores(found))
    figures.setup()
    fig = report.figure(
        pairs,
        found,
        args.testset,
        notes,
        epsilon=epsilon,
        counts=report.count_note(table, args.testset),
    )
    figures.save(fig, args.out_fig, block)
    log.info("%d condition(s) over %d model(s)", len(found), pairs["model"].nunique())
