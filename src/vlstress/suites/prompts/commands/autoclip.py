"""`vlstress autoclip`: AutoCLIP's per-image template weighting beside plain template averaging, on
every zero-shot evaluation of one model (clean test sets, corrupted and typographic copies).

The sets are the evaluations the params produce (`evaluations(params)` of each --evaluations-from
module), read from their image embeddings and the per-template text embeddings of their test set.
One record per evaluation (task `autoclip`, the evaluation's condition): top1_average,
top1_autoclip, gain, max_weight. The work: vlstress.suites.prompts.evaluation; the method:
vlstress.suites.prompts.autoclip.
"""

from __future__ import annotations

import argparse
import logging

from vlstress.suites.prompts import flags

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    flags.add_autoclip_arguments(parser)


def run(args: argparse.Namespace) -> None:
    from vlstress.outcomes import outcomes_path, write_outcomes
    from vlstress.params import Params
    from vlstress.record import write_records
    from vlstress.suites.prompts.evaluation import evaluate

    records, outcomes = evaluate(
        Params.load(args.params),
        params_files=args.params,
        model_slug=args.model,
        modules=args.evaluations_from,
        beta=args.beta,
        log=log,
    )
    write_records(args.out, records)
    write_outcomes(outcomes_path(args.out), outcomes)
