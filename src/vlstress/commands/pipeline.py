"""`vlstress pipeline`: the DVC front end rendered from the stage declarations, and checked.

vlstress pipeline render   write dvc.yaml for the params and the whole params schema
                           (after switching a suite, or editing the stage declarations or
                           the code a step imports): vlstress.pipeline.rendered
vlstress pipeline check    exit 2 when the params are invalid or a rendered file differs from
                           what render would write; with --stamp, write the stamp the first
                           steps of both front ends wait for (the workflow's gate)
vlstress pipeline stages   the stages of the current params, one line each
vlstress pipeline use FILE merge a params file (e.g. params.coco-mini.yaml) into params.yaml,
                           keeping its comments, and render dvc.yaml: what
                           `snakemake --configfile FILE` does, for DVC
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from vlstress.pipeline_flags import add_pipeline_arguments, stage_line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_pipeline_arguments(parser)


def run(args: argparse.Namespace) -> None:
    from vlstress import params as params_module
    from vlstress import params_check
    from vlstress.errors import VlstressError
    from vlstress.io import write_text
    from vlstress.pipeline import GATE_STAMP, active_stages, check_inputs, rendered

    files = args.params or [Path("params.yaml")]
    if args.action == "use":
        if args.file is None or len(files) != 1:
            raise VlstressError("usage: vlstress pipeline use FILE [--params params.yaml]")
        params_check.validate(
            params_module.load([files[0], args.file]), f"{files[0]} + {args.file}"
        )
        params_check.merge_into_file(files[0], args.file)
        print(f"merged {args.file} into {files[0]}", file=sys.stderr)
        args.action = "render"
    params = params_check.validate(params_module.load(files), ", ".join(map(str, files)))
    if args.action == "stages":
        for stage in active_stages(params):
            print(stage_line(stage))
        return
    if args.action == "render":
        for path in rendered.write(params, args.dvc_yaml):
            print(f"wrote {path}", file=sys.stderr)
        return
    check_inputs(params)  # a missing dataset folder or checkpoint: refused before any step
    # dvc.yaml describes params.yaml alone; a Snakemake run with more params files is not DVC's
    problems = rendered.stale(params, args.dvc_yaml)
    if problems and (args.stamp is None or files == [Path("params.yaml")]):
        if args.stamp is not None:  # the gate step: inside `dvc exp run -S suites.X=...`, undo it
            from vlstress.pipeline.experiments import undo_switch

            undone = undo_switch(params, files[0], args.dvc_yaml, Path(args.stamp))
            if undone:
                problems.append(f"nothing of this experiment ran: {undone}")
        raise VlstressError("\n".join(problems))
    if args.stamp is not None:
        write_text(args.stamp, GATE_STAMP)
    print(f"params valid; {args.dvc_yaml} and the params schema are up to date", file=sys.stderr)
