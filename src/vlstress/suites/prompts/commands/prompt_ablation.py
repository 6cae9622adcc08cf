"""`vlstress prompt-ablation`: zero-shot top-1, ECE and OOD AUROC of one model as the number of
prompt templates grows (1, 2, 4, ... and the whole set), several seeded subsets per count.

Each subset's classifier is the normalised mean of its templates' text embeddings, read from the
per-template file the model's classifier job wrote (`prompts/<test set>.npy`), so the ablation
embeds no text. Records: task `prompt_count` (condition {set, templates, seed}: top-1, ECE, NLL)
and `prompt_count_ood` (condition {set, ood, templates, seed}: MCM AUROC and FPR@95, when the ood
suite is on); the subsets drawn go to the sidecar. The work: vlstress.suites.prompts.ablation.
"""

from __future__ import annotations

import argparse
import logging

from vlstress.suites.prompts import flags

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    flags.add_ablation_arguments(parser)


def run(args: argparse.Namespace) -> None:
    from vlstress.io import sidecar, write_json
    from vlstress.outcomes import outcomes_path, write_outcomes
    from vlstress.params import Params
    from vlstress.record import write_records
    from vlstress.suites.prompts.ablation import ablate

    ablation = ablate(
        Params.load(args.params),
        model_slug=args.model,
        counts=args.counts,
        seeds=args.seeds,
        seed=args.seed,
        bins=args.bins,
        log=log,
    )
    write_records(args.out, ablation.records)
    write_json(sidecar(args.out), ablation.subsets)
    write_outcomes(outcomes_path(args.out), ablation.outcomes)
