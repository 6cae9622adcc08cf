"""The offline demo's training set: eight other photos shipped inside scikit-image (a cell, a
checkerboard, a clock, a colour wheel, a horse, a stained tissue, a logo, printed text), with five
captions each written by this project (vlstress/data/demo_train_captions.json). None of them is a
demo test photo, so robust fine-tuning can train on them offline (docs/finetune.md).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from vlstress.caption_data import demo

CAPTIONS = "data/demo_train_captions.json"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """No flags of its own."""


def materialize(args: argparse.Namespace, out: Path) -> dict[str, Any]:
    return demo.materialize(args, out, resource=CAPTIONS)
