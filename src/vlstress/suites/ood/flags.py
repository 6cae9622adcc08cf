"""The flags of `vlstress ood-detect` and `vlstress ood-detect-sets`."""

from __future__ import annotations

import argparse
from pathlib import Path

from vlstress.argtypes import positive_float


def score_list(value: str) -> list[str]:
    """`--scores`: comma-separated names of scores.SCORES, duplicates dropped."""
    from vlstress.suites.ood.scores import SCORES

    names = [part.strip() for part in str(value).split(",") if part.strip()]
    unknown = [name for name in names if name not in SCORES]
    if not names or unknown:
        raise argparse.ArgumentTypeError(
            f"scores must be comma-separated names among {', '.join(SCORES)}, got {value!r}"
        )
    return list(dict.fromkeys(names))


def add_ood_detect_arguments(parser: argparse.ArgumentParser) -> None:
    """Every flag of `vlstress ood-detect`."""
    parser.add_argument(
        "--testset", required=True, type=Path, help="in-distribution test set (folder or manifest)"
    )
    parser.add_argument(
        "--image-emb",
        required=True,
        type=Path,
        help="its image embeddings (`vlstress embed-zeroshot --sets images`)",
    )
    parser.add_argument(
        "--classifier", required=True, type=Path, help="its zero-shot classifier (same model)"
    )
    parser.add_argument(
        "--ood-testset",
        required=True,
        type=Path,
        help="the out-of-distribution set (folder or manifest)",
    )
    parser.add_argument(
        "--ood-emb", required=True, type=Path, help="its image embeddings (same model)"
    )
    add_score_arguments(parser)
    parser.add_argument(
        "--out",
        required=True,
        type=Path,
        help=(
            "records file (ROC curves in <out>.json; per-image scores in <out stem>.outcomes.npz)"
        ),
    )
    parser.add_argument(
        "--out-fig", required=True, type=Path, help="ROC curves (PNG, PDF beside it)"
    )


def add_score_arguments(parser: argparse.ArgumentParser) -> None:
    """--scores and --temperature (`ood-detect`, `ood-detect-sets`), and how the ROC figure's
    AUROC intervals are computed (as the headline table computes them)."""
    parser.add_argument(
        "--confidence", type=float, default=0.95, help="of the AUROC interval on the ROC figure"
    )
    parser.add_argument(
        "--bootstrap", type=int, default=1000, help="resamples of that interval (BCa)"
    )
    parser.add_argument("--seed", type=int, default=0, help="of that bootstrap")
    parser.add_argument(
        "--scores",
        type=score_list,
        default=["mcm", "msp", "max_logit", "energy"],
        help="comma-separated OOD scores",
    )
    parser.add_argument(
        "--temperature",
        type=positive_float,
        default=1.0,
        help="T of MCM (softmax of cosine / T) and of the energy",
    )
