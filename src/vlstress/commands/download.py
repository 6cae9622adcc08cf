"""`vlstress download`: materialise the raw data of one dataset kind under --out.

The output folder appears only when everything succeeded (built in a temp
folder, then renamed). Partial HTTP transfers live in --cache-dir so an
interrupted download resumes instead of restarting.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from vlstress import provenance
from vlstress.argtypes import optional_int
from vlstress.caption_data import kinds as datasets
from vlstress.io import atomic_dir, dumps_json

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", required=True, help="dataset name (labels outputs)")
    parser.add_argument(
        "--kind", required=True, choices=sorted(datasets.KINDS), help="dataset kind"
    )
    parser.add_argument(
        "--max-images", type=optional_int, default=None, help="keep only the first N images"
    )
    parser.add_argument("--out", required=True, type=Path, help="raw data folder to create")
    for kind in sorted(datasets.KINDS):  # each kind owns distinct flags
        datasets.kind_module(kind).add_arguments(parser.add_argument_group(f"kind {kind}"))


def run(args: argparse.Namespace) -> None:
    module = datasets.kind_module(args.kind)
    with atomic_dir(args.out) as tmp:
        record = module.materialize(args, tmp)
        captions = record.pop("captions")
        (tmp / "captions.json").write_text(dumps_json(captions), encoding="utf-8")
        params = {
            k: v
            for k, v in vars(args).items()
            if not k.startswith("_") and k not in {"command", "verbose"}
        }
        record["provenance"] = provenance.build("download", params)
        (tmp / "download.json").write_text(dumps_json(record), encoding="utf-8")
    log.info("wrote %s (%d files)", args.out, len(record.get("files", {})))
