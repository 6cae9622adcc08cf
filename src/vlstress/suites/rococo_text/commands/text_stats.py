"""`vlstress text-stats`: statistics of the caption sets, beside the official RoCOCO sets.

For every set file in --variants-dir (official format) and, when the variants are
generated and the official <set>.json is available (--official-dir, or <raw>/rococo of
the karpathy download), for the official set restricted to the manifest's images:
share of one-word edits, parts of speech of replaced words, distinct replacements,
most replaced words, mean scorer cosine(original, altered). Writes JSON (provenance),
CSV, Markdown and a figure (PNG + PDF). The work: vlstress.suites.rococo_text.stats_report.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from vlstress.suites.rococo_text import stats_report


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from vlstress.embedding.flags import add_model_arguments

    parser.add_argument("--manifest", required=True, type=Path)
    stats_report.add_set_arguments(parser)
    add_model_arguments(parser)  # the scorer whose cosine(original, altered) is reported
    parser.add_argument(
        "--out", required=True, type=Path, help="JSON to write (results/text/stats.json)"
    )
    parser.add_argument("--out-csv", required=True, type=Path)
    parser.add_argument("--out-md", required=True, type=Path)
    parser.add_argument(
        "--out-fig", required=True, type=Path, help="PNG to write (a PDF is written beside it)"
    )


def run(args: argparse.Namespace) -> None:
    from vlstress.io import write_json, write_text
    from vlstress.suites.rococo_text import stats

    report = stats_report.describe(
        args.manifest,
        args.variants_dir,
        args.params,
        source=args.source,
        official_dir=args.official_dir,
        raw=args.raw,
        nltk_data=args.nltk_data,
        model_args=args,
    )
    frame = report.frame
    write_text(args.out_csv, frame.to_csv(index=False, float_format="%.4f"))
    write_text(args.out_md, frame.to_markdown(index=False, floatfmt=".3f") + "\n")
    stats.plot(report.results, args.out_fig, args.out_fig.with_suffix(".pdf"))
    write_json(args.out, report.document)
    print(frame.to_string(index=False))
