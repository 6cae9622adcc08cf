"""`vlstress evaluate-texts`: image-to-text metrics of one model on every caption set of the params
(`text_variants.sets`), one job per model.

Each set is scored as `evaluate-text` scores one (vlstress.suites.rococo_text.evaluation), from
the model's retrieval embeddings: one record per set, `<out-dir>/text-<set>.json`, with its
per-image outcomes (`.outcomes.npz`). One job instead of one per set: planning time grows with
jobs (docs/throughput.md). Every set is evaluated before anything is written, so a bad one leaves
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
        help="params file(s): which caption sets the run evaluates",
    )
    parser.add_argument(
        "--manifest", required=True, type=Path, help="manifest of the original test set"
    )
    parser.add_argument(
        "--emb",
        required=True,
        type=Path,
        help="the model's folder of `vlstress embed-retrieval` (images, captions and sets)",
    )
    add_ranking_arguments(parser, "image rows")
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
    from vlstress.suites.rococo_text import evaluation, paths

    found = []
    for name in paths.set_names(Params.load(args.params)):
        record, outcomes = evaluation.evaluate(
            args.manifest,
            args.emb / "images.npy",
            args.emb / "texts.npy",
            Path(paths.TEXT_SET.format(set=name)),
            args.emb / paths.TEXT_SET_EMB.format(set=name),
            set_name=name,
            ks=args.ks,
            chunk_size=args.chunk_size,
            ties=args.ties,
        )
        found.append((args.out_dir / paths.RECORD_NAME.format(set=name), record, outcomes))
    for path, record, outcomes in found:
        write_record(path, record)
        write_outcomes(outcomes_path(path), [outcomes])
