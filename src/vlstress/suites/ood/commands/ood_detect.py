"""`vlstress ood-detect`: out-of-distribution detection of one model, in-distribution test set vs
one OOD set.

Both sets are scored against the in-distribution classifier (vlstress.suites.ood.run, the scores
in vlstress.suites.ood.scores), from embeddings already computed. One record per score (task
`ood`, condition {ood, score}): AUROC, FPR at 95% TPR, AUPR-In, AUPR-Out (%). Each record's
per-image outcomes (the score of every ID image, then of every OOD image) go to
`<out stem>.outcomes.npz` (vlstress.outcomes), the ROC curves to the sidecar and the figure to
--out-fig. The flags: vlstress.suites.ood.flags.
"""

from __future__ import annotations

import argparse
import logging

from vlstress.suites.ood import flags

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    flags.add_ood_detect_arguments(parser)


def run(args: argparse.Namespace) -> None:
    from vlstress.io import sidecar, write_json
    from vlstress.outcomes import outcomes_path, write_outcomes
    from vlstress.record import write_records
    from vlstress.report import figures
    from vlstress.suites.ood.run import detect

    detection = detect(
        args.testset,
        args.image_emb,
        args.classifier,
        args.ood_testset,
        args.ood_emb,
        scores=args.scores,
        temperature=args.temperature,
        log=log,
        interval=(args.confidence, args.bootstrap, args.seed),
    )
    write_records(args.out, detection.records)
    write_outcomes(outcomes_path(args.out), detection.outcomes)
    write_json(sidecar(args.out), detection.roc_sidecar)
    figures.setup()
    figures.save(detection.figure(), args.out_fig, detection.block)
