"""The flags of `vlstress calibrate`."""

from __future__ import annotations

import argparse
from pathlib import Path

from vlstress.argtypes import fraction, positive_int, seed_int, suite_modules


def add_calibrate_arguments(parser: argparse.ArgumentParser) -> None:
    """Every flag of `vlstress calibrate`."""
    parser.add_argument(
        "--params",
        action="append",
        required=True,
        type=Path,
        help="params file(s): which sets the run evaluates",
    )
    parser.add_argument("--model", required=True, help="model slug (key of `models`)")
    parser.add_argument(
        "--evaluations-from",
        required=True,
        type=suite_modules,
        help="modules whose evaluations(params) list the sets",
    )
    parser.add_argument(
        "--in-distribution",
        required=True,
        help="test set whose fit split fits the temperature (scored on its held-out rest)",
    )
    parser.add_argument(
        "--fit-fraction",
        type=fraction,
        default=0.5,
        help="share of the in-distribution images the temperature is fitted on",
    )
    parser.add_argument("--seed", type=seed_int, default=0, help="seed of the fit / held-out split")
    parser.add_argument(
        "--bins", type=positive_int, default=15, help="equal-width confidence bins of the ECE"
    )
    parser.add_argument(
        "--out",
        required=True,
        type=Path,
        help=(
            "records file (reliability bins in <out>.json; per-image outcomes in "
            "<out stem>.outcomes.npz)"
        ),
    )
    parser.add_argument(
        "--out-fig", required=True, type=Path, help="reliability diagrams (PNG, PDF beside it)"
    )
