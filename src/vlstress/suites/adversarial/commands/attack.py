"""`vlstress attack`: one adversarial attack on a model's zero-shot classifier, at every eps of its
list.

The attacked function is pixels in [0, 1] (after the model's resize and centre crop) ->
normalisation -> image tower -> zero-shot logits (vlstress.suites.adversarial.attacks). Images are
a seeded sample of the test set (--n-images). Writes one record per eps (task `adversarial`,
condition {attack, eps}) into one file, and per-image results in its sidecar.
See vlstress.suites.adversarial.run for the work and vlstress.suites.adversarial.flags for the
flags.
"""

from __future__ import annotations

import argparse
import logging

from vlstress.suites.adversarial import flags

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    flags.add_attack_arguments(parser)


def run(args: argparse.Namespace) -> None:
    from vlstress.io import sidecar, write_json
    from vlstress.outcomes import outcomes_path, write_outcomes
    from vlstress.record import write_records
    from vlstress.suites.adversarial.run import attack, log_records

    attacked = attack(args)
    write_records(args.out, attacked.records)
    write_json(sidecar(args.out), attacked.per_image)
    write_outcomes(outcomes_path(args.out), attacked.outcomes)
    log_records(attacked, args.attack, log)
