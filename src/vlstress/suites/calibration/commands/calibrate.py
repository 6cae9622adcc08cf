"""`vlstress calibrate`: calibration of one model's zero-shot softmax on every set of the run.

The sets are the zero-shot evaluations the params produce (every test set, each corruption
at each severity, the typographic attack: `evaluations(params)` of each --evaluations-from module),
read from their embeddings and classifiers, so nothing is encoded again. A temperature is
fitted on a seeded split of the in-distribution set and applied unchanged to the held-out
rest and to every other set. One record per set (task `calibration`): top-1, confidence,
ECE (torchmetrics', computed in NumPy; --bins equal-width bins), NLL and Brier, raw and scaled
(`_ts`); the per-image outcomes of each record (confidence and correctness, raw and scaled, of
the images its ECE is computed on) go to `<out stem>.outcomes.npz` (vlstress.outcomes), the
reliability bins to the sidecar and the reliability diagrams to --out-fig.
See vlstress.suites.calibration.run for the work and vlstress.suites.calibration.flags for the
flags.
"""

from __future__ import annotations

import argparse
import logging

from vlstress.suites.calibration import flags

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    flags.add_calibrate_arguments(parser)


def run(args: argparse.Namespace) -> None:
    from vlstress.io import sidecar, write_json
    from vlstress.outcomes import outcomes_path, write_outcomes
    from vlstress.params import Params
    from vlstress.record import write_records
    from vlstress.report import figures
    from vlstress.suites.calibration.run import calibrate, log_records

    calibration = calibrate(
        Params.load(args.params),
        params_files=args.params,
        model_slug=args.model,
        modules=args.evaluations_from,
        in_distribution=args.in_distribution,
        fit_fraction=args.fit_fraction,
        seed=args.seed,
        n_bins=args.bins,
        log=log,
    )
    write_records(args.out, calibration.records)
    write_outcomes(outcomes_path(args.out), calibration.outcomes)
    write_json(sidecar(args.out), calibration.bins)
    figures.setup()
    figures.save(calibration.figure(), args.out_fig, calibration.block)
    log_records(calibration, args.model, log)
