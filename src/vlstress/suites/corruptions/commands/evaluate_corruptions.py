"""`vlstress evaluate-corruptions`: zero-shot classification of one model on every corrupted copy
of the test set, one job per model.

The conditions are the corruptions x severities of the params (`corruptions.names`,
`corruptions.severities`), each read from the model's corrupted-set embeddings and the clean
test set's classifier (vlstress.suites.corruptions.paths.evaluations), and scored as
`evaluate-zeroshot --task corruption` scores one (vlstress.suites.zeroshot.evaluation): one
record per condition, `<out-dir>/corruption-<name>-s<severity>.json` with its per-class sidecar and
its per-image outcomes (`.outcomes.npz`).
One job instead of one per condition: at the papers' scale (19 x 5 conditions) these were 95 of
~130 jobs per model, and planning time grows with jobs (docs/throughput.md). Every condition is
evaluated before anything is written, so a bad one leaves no record behind.

Each record's condition also names what was corrupted (`images`: `imagenet-c` for the released
ImageNet-C files, else the kind of the clean test set from its record, e.g. `imagenet` for ImageNet
val): the mCE against AlexNet's published errors is comparable only for ImageNet val
(vlstress.suites.zeroshot.corruption_error).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from vlstress.argtypes import int_list, optional_path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--params",
        action="append",
        required=True,
        type=Path,
        help="params file(s): which corruptions and severities the run evaluates",
    )
    parser.add_argument("--model", required=True, help="model slug (key of `models`)")
    parser.add_argument(
        "--clean-record",
        type=optional_path,
        default=None,
        help="record of the clean test set: clean accuracy and drop",
    )
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
    from dataclasses import replace

    from vlstress.params import Params
    from vlstress.record import read_record
    from vlstress.suites.corruptions import paths
    from vlstress.suites.corruptions.block import CorruptionsParams
    from vlstress.suites.zeroshot import evaluation

    params = Params.load(args.params)
    conditions = paths.evaluations(params)
    clean_kind = (
        None if args.clean_record is None else read_record(args.clean_record).dataset["kind"]
    )
    block = params.block(CorruptionsParams)
    images = paths.images(block.source, clean_kind, block.size) if conditions else None
    found = []
    for condition in conditions:
        one = condition.for_model(args.model)
        corruption, severity = one.condition["corruption"], one.condition["severity"]
        evaluated = evaluation.evaluate(
            Path(one.testset),
            Path(one.embeddings),
            Path(one.classifier),
            task="corruption",
            corruption=corruption,
            severity=int(severity),
            clean_record=args.clean_record,
            ks=args.ks,
        )
        if images is not None:
            record = evaluated.record
            evaluated = replace(
                evaluated, record=replace(record, condition={**record.condition, "images": images})
            )
        found.append((args.out_dir / paths.record_name(corruption, severity), evaluated))
    for path, evaluated in found:
        evaluated.write(path)
