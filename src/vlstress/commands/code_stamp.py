"""`vlstress code-stamp`: the md5 of each source file a step runs, one `<md5>  <path>` line each
(as `md5sum` prints them), in the order given.

Every step depends on its stamp (results/code/<stage>.md5) instead of on each of its source
files: the files are listed once per stage kind, not once per model and condition, so dvc.lock
and the DAG stay small at paper scale, and an edit still reruns exactly the steps whose code
it touches (docs/architecture.md).
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

from vlstress.errors import VlstressError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, required=True, help="the stamp file to write")
    parser.add_argument("files", nargs="+", type=Path, help="the source files, in stamp order")


def run(args: argparse.Namespace) -> None:
    from vlstress.io import write_text

    lines = []
    for path in args.files:
        try:
            digest = hashlib.md5(path.read_bytes()).hexdigest()
        except OSError as exc:
            raise VlstressError(f"cannot read source file {path}: {exc.strerror}") from exc
        lines.append(f"{digest}  {path.as_posix()}\n")
    write_text(args.out, "".join(lines))
