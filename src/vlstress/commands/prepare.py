"""`vlstress prepare`: raw data folder -> canonical manifest (see vlstress.caption_data.manifest;
the reading: vlstress.caption_data.raw_folder)."""

from __future__ import annotations

import argparse
from pathlib import Path

from vlstress.caption_data.raw_folder import build_manifest
from vlstress.io import write_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", required=True, help="dataset name recorded in the manifest")
    parser.add_argument(
        "--raw", required=True, type=Path, help="raw folder written by `vlstress download`"
    )
    parser.add_argument("--out", required=True, type=Path, help="manifest json to write")


def run(args: argparse.Namespace) -> None:
    write_json(args.out, build_manifest(args.dataset, args.raw))
