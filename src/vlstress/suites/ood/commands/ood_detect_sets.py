"""`vlstress ood-detect-sets`: out-of-distribution detection of one model, the in-distribution test
set against every OOD set of the params (`ood.sets`), one job per model.

Each OOD set is scored as `ood-detect` scores one (vlstress.suites.ood.run), from the model's
zero-shot embeddings (`--emb`: the OOD sets' embeddings are `ood/<set>.npy` in it): per set,
`<out-dir>/ood-<set>.json` (one record per score), its ROC curves (`.json` sidecar), its per-image
scores (`.outcomes.npz`) and `<fig-dir>/ood_roc_<model>_<set>.png` (+ PDF). One job instead of one
per set: planning time grows with jobs (docs/throughput.md). Every set is scored before anything
is written, so a bad one leaves no record behind.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from vlstress.suites.ood import flags

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--params",
        action="append",
        required=True,
        type=Path,
        help="params file(s): which OOD sets the run scores",
    )
    parser.add_argument("--model", required=True, help="model slug (names the figures)")
    parser.add_argument(
        "--testset", required=True, type=Path, help="in-distribution test set (folder or manifest)"
    )
    parser.add_argument(
        "--image-emb", required=True, type=Path, help="its image embeddings (same model)"
    )
    parser.add_argument(
        "--classifier", required=True, type=Path, help="its zero-shot classifier (same model)"
    )
    parser.add_argument(
        "--emb",
        required=True,
        type=Path,
        help="the model's folder of `vlstress embed-zeroshot --sets images` (the OOD sets)",
    )
    flags.add_score_arguments(parser)
    parser.add_argument("--out-dir", required=True, type=Path, help="the model's record folder")
    parser.add_argument("--fig-dir", required=True, type=Path, help="the figures folder")


def run(args: argparse.Namespace) -> None:
    from vlstress.io import sidecar, write_json
    from vlstress.outcomes import outcomes_path, write_outcomes
    from vlstress.params import Params
    from vlstress.record import write_records
    from vlstress.report import figures
    from vlstress.suites.ood import paths
    from vlstress.suites.ood.run import detect

    found = []
    for name in paths.names(Params.load(args.params)):
        detection = detect(
            args.testset,
            args.image_emb,
            args.classifier,
            Path(paths.OOD_SET.format(oodset=name)),
            args.emb / paths.OOD_EMB.format(oodset=name),
            scores=args.scores,
            temperature=args.temperature,
            log=log,
            interval=(args.confidence, args.bootstrap, args.seed),
        )
        found.append((name, detection))
    figures.setup()
    for name, detection in found:
        out = args.out_dir / paths.RECORD_NAME.format(oodset=name)
        write_records(out, detection.records)
        write_outcomes(outcomes_path(out), detection.outcomes)
        write_json(sidecar(out), detection.roc_sidecar)
        figure = args.fig_dir / paths.FIGURE_NAME.format(model=args.model, oodset=name)
        figures.save(detection.figure(), figure, detection.block)
