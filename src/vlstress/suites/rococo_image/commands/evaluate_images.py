"""`vlstress evaluate-images`: text-to-image metrics of one model on every perturbed-image variant
of the params (`image_variants` methods x lams x seeds), one job per model.

Each variant is scored as `evaluate-image` scores one (vlstress.suites.rococo_image.evaluation),
from the model's retrieval embeddings: one record per variant,
`<out-dir>/image-<method>-lam<lam>-seed<seed>.json`, with its per-caption outcomes
(`.outcomes.npz`). One job instead of one per variant: planning time grows with jobs
(docs/throughput.md). Every variant is evaluated before anything is written, so a bad one leaves
no record behind.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from vlstress.retrieval_flags import add_ranking_arguments


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--params",
        action="append",
        required=True,
        type=Path,
        help="params file(s): which variants the run evaluates",
    )
    parser.add_argument(
        "--manifest", required=True, type=Path, help="manifest of the original test set"
    )
    parser.add_argument(
        "--emb",
        required=True,
        type=Path,
        help="the model's folder of `vlstress embed-retrieval` (images, captions and variants)",
    )
    add_ranking_arguments(parser, "caption rows")
    parser.add_argument(
        "--out-dir",
        required=True,
        type=Path,
        help="the model's record folder (results/metrics/<model>)",
    )


def run(args: argparse.Namespace) -> None:
    from vlstress.outcomes import outcomes_path, write_outcomes
    from vlstress.params import Params
    from vlstress.record import write_record
    from vlstress.suites.rococo_image import evaluation, paths

    found = []
    for variant in paths.variants(Params.load(args.params)):
        record, outcomes = evaluation.evaluate(
            args.manifest,
            args.emb / "images.npy",
            args.emb / "texts.npy",
            Path(paths.VARIANT_DIR.format(**variant)),
            args.emb / paths.VARIANT_EMB.format(**variant),
            ks=args.ks,
            chunk_size=args.chunk_size,
            ties=args.ties,
        )
        found.append((args.out_dir / paths.RECORD_NAME.format(**variant), record, outcomes))
    for path, record, outcomes in found:
        write_record(path, record)
        write_outcomes(outcomes_path(path), [outcomes])
