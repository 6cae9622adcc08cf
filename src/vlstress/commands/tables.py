"""`vlstress tables`: the tables of one suite's table module as Markdown and LaTeX.

`--module` names the module (e.g. `vlstress.suites.retrieval.table`, the RoCOCO stress table);
its `render(summary, provenance)` returns the Markdown, the LaTeX and notes. Both files carry
the provenance (an HTML comment, LaTeX comments); a suite without records gets a note instead
of a table.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from vlstress.argtypes import suite_module

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--summary", required=True, type=Path, help="long CSV from `vlstress summarize` (--out-csv)"
    )
    parser.add_argument(
        "--module", required=True, type=suite_module, help="a suite's table module (with render)"
    )
    parser.add_argument("--out-md", required=True, type=Path, help="Markdown")
    parser.add_argument("--out-tex", required=True, type=Path, help="LaTeX (booktabs)")


def run(args: argparse.Namespace) -> None:
    import importlib

    from vlstress import provenance
    from vlstress.io import sha256_file, write_text
    from vlstress.report import records

    table = records.read_summary(args.summary)
    module = importlib.import_module(args.module)
    block = provenance.build(
        "tables",
        {"summary": str(args.summary)},
        inputs={str(args.summary): sha256_file(args.summary)},
    )
    markdown, latex, notes = module.render(table, block)
    for note in notes:
        log.info("%s", note)
    write_text(args.out_md, markdown)
    write_text(args.out_tex, latex)
    log.info("wrote %s and %s", args.out_md, args.out_tex)
