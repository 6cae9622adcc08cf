"""`vlstress tables`: the tables of one suite's table module as Markdown and LaTeX.

`--module` names the module (e.g. `vlstress.suites.retrieval.table`, the RoCOCO stress table);
its `render(summary, provenance)` returns the Markdown, the LaTeX and notes. With `--headlines`
(the CSV of `vlstress headlines`), a module that shows intervals gets the headline table too:
`render(summary, provenance, headlines=frame)`. Both files carry the provenance (an HTML comment,
LaTeX comments); a suite without records gets a note instead of a table.
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
    parser.add_argument(
        "--headlines",
        type=Path,
        help="headline table of `vlstress headlines`: the intervals the tables show",
    )
    parser.add_argument("--out-md", required=True, type=Path, help="Markdown")
    parser.add_argument("--out-tex", required=True, type=Path, help="LaTeX (booktabs)")


def run(args: argparse.Namespace) -> None:
    import importlib
    import inspect

    from vlstress import provenance
    from vlstress.io import sha256_file, write_text
    from vlstress.report import records

    table = records.read_summary(args.summary)
    module = importlib.import_module(args.module)
    inputs = {str(args.summary): sha256_file(args.summary)}
    extra = {}
    if args.headlines is not None:
        from vlstress.errors import VlstressError
        from vlstress.report.headlines import read_headline_table

        if "headlines" not in inspect.signature(module.render).parameters:
            raise VlstressError(
                f"--headlines: {args.module} shows no intervals (its render takes no headline "
                "table); leave the flag out"
            )
        extra["headlines"] = read_headline_table(args.headlines)
        inputs[str(args.headlines)] = sha256_file(args.headlines)
    block = provenance.build(
        "tables",
        {"summary": str(args.summary), **({"headlines": str(args.headlines)} if extra else {})},
        inputs=inputs,
    )
    markdown, latex, notes = module.render(table, block, **extra)
    for note in notes:
        log.info("%s", note)
    write_text(args.out_md, markdown)
    write_text(args.out_tex, latex)
    log.info("wrote %s and %s", args.out_md, args.out_tex)
