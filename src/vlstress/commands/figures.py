"""`vlstress figures`: the figures of one suite's figure module (PNG + PDF) from the summary table.

`--module` names the module (e.g. `vlstress.suites.calibration.figures`); its `FIGURES` maps each
name to a function of the long summary table that returns (figure, notes). Writes
`<out-dir>/<name>.png` and `<name>.pdf` for each of `--only` (default: all). A suite without
records gets a placeholder figure that says so, and a log line.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from vlstress.argtypes import suite_module
from vlstress.errors import VlstressError

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
    parser.add_argument("--only", default=None, help="comma-separated figure names (default: all)")


def run(args: argparse.Namespace) -> None:
    import importlib

    from vlstress import provenance
    from vlstress.io import sha256_file
    from vlstress.report import figures, records

    available = importlib.import_module(args.module).FIGURES
    table = records.read_summary(args.summary)
    names = (
        list(available)
        if not args.only or args.only == "None"
        else [n.strip() for n in args.only.split(",")]
    )
    unknown = [n for n in names if n not in available]
    if unknown:
        raise VlstressError(
            f"unknown figure(s) {', '.join(unknown)} in {args.module}; known: "
            f"{', '.join(available)}"
        )
    inputs = {str(args.summary): sha256_file(args.summary)}
    figures.setup()
    for name in names:
        fig, notes = available[name](table)
        for note in notes:
            log.info("%s: %s", name, note)
        block = provenance.build(
            "figures", {"summary": str(args.summary), "figure": name, "notes": notes}, inputs=inputs
        )
        figures.save(fig, args.out_dir / f"{name}.png", block)
        log.info("wrote %s.png/.pdf", args.out_dir / name)
