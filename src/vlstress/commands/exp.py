"""`vlstress exp run [dvc exp run arguments]`: `dvc exp run` whose -S may switch suites.

dvc.yaml holds the stages of the suites that are on, and DVC cannot add or remove stages on a param
(its templating has no conditionals), so `dvc exp run -S suites.ood=false` stops at `check_params`
(which puts params.yaml back as it was).
`vlstress exp run` takes the same arguments: it applies each combination of the -S overrides
(params.yaml only; sweeps such as `suites.ood=true,false` need --queue, as in DVC) to params.yaml,
checks the params, renders dvc.yaml, and runs `dvc exp run` with the other arguments unchanged
(`--queue`, `-n NAME`, `--temp`, `-f`, targets). Queued and `--temp` experiments leave params.yaml
and dvc.yaml as they were: vlstress.pipeline.experiments
"""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.description = __doc__
    parser.add_argument("action", choices=["run"])
    parser.add_argument(
        "dvc_args",
        nargs=argparse.REMAINDER,
        metavar="ARGS",
        help="the arguments of `dvc exp run` (-S/--set-param, --queue, -n NAME, ...)",
    )


def run(args: argparse.Namespace) -> None:
    from vlstress.pipeline import experiments

    if {"-h", "--help"} & set(args.dvc_args):
        print(__doc__)
        return
    experiments.run(list(args.dvc_args))
