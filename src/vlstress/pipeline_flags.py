"""The flags of `vlstress pipeline` and the line it prints for each stage (`stages`).

Kept apart from `vlstress.pipeline` (which reads every suite's declarations): nothing here imports
it."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vlstress.workflow.spec import Stage


def add_pipeline_arguments(parser: argparse.ArgumentParser) -> None:
    """The action (render, check, stages, use), its file (use) and the files it reads or writes."""
    parser.add_argument("action", choices=["render", "check", "stages", "use"])
    parser.add_argument(
        "file", nargs="?", type=Path, help="use: the params file to merge into params.yaml"
    )
    parser.add_argument(
        "--params",
        action="append",
        type=Path,
        help="params file(s), merged in order (default: params.yaml)",
    )
    parser.add_argument(
        "--dvc-yaml", type=Path, default=Path("dvc.yaml"), help="the file to write or check"
    )
    parser.add_argument(
        "--stamp", type=Path, default=None, help="check: file to write when the check passes"
    )


def stage_line(stage: Stage) -> str:
    """One line of `vlstress pipeline stages`: name, axes, suite, subcommand and what it does."""
    return (
        f"{stage.name:22s} {'x'.join(stage.axes) or '-':22s} "
        f"{stage.suite or 'always':14s} {stage.subcommand:20s} {stage.doc}"
    )
