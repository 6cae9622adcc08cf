"""The ranking flags every Recall@K evaluation shares (`vlstress evaluate`, `evaluate-text`,
`evaluate-image`): the K of Recall@K, the rows scored at a time, and the tie policy
(vlstress.retrieval_metrics)."""

from __future__ import annotations

import argparse

from vlstress import retrieval_metrics as metrics
from vlstress.argtypes import int_list, positive_int


def add_ranking_arguments(parser: argparse.ArgumentParser, rows: str) -> None:
    """--ks, --chunk-size (`rows`: what is scored a chunk at a time, e.g. "query rows") and
    --ties."""
    parser.add_argument(
        "--ks",
        type=int_list,
        default=list(metrics.DEFAULT_KS),
        help="comma-separated K of Recall@K",
    )
    parser.add_argument(
        "--chunk-size", type=positive_int, default=1024, help=f"{rows} scored at a time"
    )
    parser.add_argument(
        "--ties",
        choices=metrics.TIE_POLICIES,
        default="optimistic",
        help="how exactly tied scores rank (vlstress.metrics)",
    )
