"""`vlstress evaluate-corruptions-3d`: zero-shot classification of one model on every 3D-corrupted
copy of the test set, one job per model.

The conditions are the corruptions x severities of the params (`corruptions_3d.names`,
`corruptions_3d.severities`; vlstress.suites.corruptions_3d.paths.evaluations), each scored as the
zero-shot suite scores a corrupted set (vlstress.suites.zeroshot.evaluation) under the task
`corruption_3d`: one record per condition, `<out-dir>/corruption3d-<name>-s<severity>.json`, with
its per-class sidecar and per-image outcomes. Each record's condition names what was corrupted
(`images`) and the depth used (`depth`: a synthetic ramp is said to be one). Every condition is
evaluated before anything is written, so a bad one leaves no record behind.
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
    parser.add_argument("--out-dir", required=True, type=Path, help="the model's record folder")


def run(args: argparse.Namespace) -> None:
    from vlstress.io import sidecar, write_json
    from vlstress.outcomes import outcomes_path, write_outcomes
    from vlstress.params import Params
    from vlstress.record import read_record, write_record
    from vlstress.suites.corruptions_3d import paths
    from vlstress.suites.corruptions_3d.block import Corruptions3dParams
    from vlstress.suites.corruptions_3d.evaluation import evaluate

    params = Params.load(args.params)
    block = params.block(Corruptions3dParams)
    clean_kind = (
        None if args.clean_record is None else read_record(args.clean_record).dataset["kind"]
    )
    images = paths.images(block.source, clean_kind, block.size)
    found = []
    for condition in paths.evaluations(params):
        one = condition.for_model(args.model)
        corruption, severity = one.condition["corruption"], one.condition["severity"]
        extra = {"depth": paths.depth(block, corruption), "images": images}
        evaluated = evaluate(one, extra, args.clean_record, args.ks)
        path = args.out_dir / paths.record_name(corruption, severity)
        found.append((path, evaluated))
    for path, evaluated in found:
        write_record(path, evaluated.record)
        write_json(sidecar(path), evaluated.per_class)
        write_outcomes(outcomes_path(path), [evaluated.outcomes])
