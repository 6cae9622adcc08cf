"""The real benchmark: COCO val2014 images of the Karpathy 5k test split (being written)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..errors import VlstressError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--base-url", default=None, help="karpathy: COCO image server")


def materialize(args: argparse.Namespace, out: Path) -> dict[str, Any]:
    raise VlstressError("the karpathy download is not implemented yet")
