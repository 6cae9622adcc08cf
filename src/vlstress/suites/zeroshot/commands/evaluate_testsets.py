"""`vlstress evaluate-testsets`: zero-shot classification of one model on every clean test set of
the params (`zeroshot.testsets`), one job per model.

Each test set is scored as `evaluate-zeroshot` scores one (vlstress.suites.zeroshot.evaluation),
from the model's zero-shot embeddings and classifiers: one record per set,
`<out-dir>/zeroshot-<set>.json`, with its per-class sidecar and its per-image outcomes
(`.outcomes.npz`). One job instead of one per set: planning time grows with jobs
(docs/throughput.md). Every set is evaluated before anything is written, so a bad one leaves no
record behind.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from vlstress.argtypes import int_list


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--params",
        action="append",
        required=True,
        type=Path,
        help="params file(s): which test sets the run evaluates",
    )
    parser.add_argument("--model", required=True, help="model slug (key of `models`)")
    parser.add_argument(
        "--ks", type=int_list, default=[1, 5], help="top-k accuracies, comma-separated"
    )
    parser.add_argument(
        "--out-dir",
        required=True,
        type=Path,
        help="the model's record folder (results/metrics/<model>)",
    )


def run(args: argparse.Namespace) -> None:
    from vlstress.params import Params
    from vlstress.suites.zeroshot import evaluation, paths
    from vlstress.workflow.paths import ZEROSHOT_RECORD

    found = []
    for condition in paths.evaluations(Params.load(args.params)):
        one = condition.for_model(args.model)
        evaluated = evaluation.evaluate(
            Path(one.testset),
            Path(one.embeddings),
            Path(one.classifier),
            task="zeroshot",
            corruption=None,
            severity=None,
            clean_record=None,
            ks=args.ks,
        )
        name = Path(ZEROSHOT_RECORD).name.format(testset=one.condition["set"])
        found.append((args.out_dir / name, evaluated))
    for path, evaluated in found:
        evaluated.write(path)
