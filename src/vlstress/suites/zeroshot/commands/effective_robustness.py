"""`vlstress effective-robustness`: place models on (or off) the line of published baselines.

Reads one or more wide CSV tables of accuracies (one row per model); two are shipped:
`--csv testbed` (imagenet-testbed's 85 ImageNet-trained models) and `--csv published` (121
open_clip CLIP models), on ImageNet and five shifts. Per shift, a line is fitted over the
baselines, by default the ImageNet-trained models (`--baselines imagenet-trained`: `--csv mine.csv
--csv testbed` places one's own models against the supervised line); every model gets effective
and relative robustness (vlstress.suites.zeroshot.baselines, which also holds the flags).

Outputs (atomic): `--out-csv` one row per (shift, model), sorted, with a provenance
sidecar `<out-csv>.json`; `--out-json` the lines, the coloured models' numbers and the
provenance (inputs' sha256, params); `--out-fig` the scatter per shift (PNG + PDF).
"""

from __future__ import annotations

import argparse
import logging

from vlstress.suites.zeroshot import baselines

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    baselines.add_arguments(parser)


def run(args: argparse.Namespace) -> None:
    from vlstress import provenance
    from vlstress.io import dumps_json, sidecar, write_json, write_text

    placed = baselines.place(args)
    for table, rows in placed.skipped.items():
        log.warning(
            "%s: %d row(s) left out, an accuracy empty: %s", table, len(rows), "; ".join(rows)
        )
    results, lines = placed.results, placed.lines
    block = provenance.build("effective-robustness", placed.params, inputs=placed.inputs)
    write_text(args.out_csv, results.to_csv(index=False, lineterminator="\n"))
    write_text(sidecar(args.out_csv), dumps_json(baselines.csv_sidecar(results, block)))
    write_json(
        args.out_json, {**baselines.summary(results, lines, placed.coloured), "provenance": block}
    )
    for model in placed.coloured:
        mean = baselines.mean_effective_robustness(results, model)
        log.info("%s: mean effective robustness %+.2f pp over %d shift(s)", model, mean, len(lines))
    if args.out_fig is not None:
        from vlstress.report import figures

        figures.setup()
        fig = baselines.figure(placed, args.baselines, args.id_column, args.highlight)
        figures.save(fig, args.out_fig, block)
        log.info("wrote %s and its PDF", args.out_fig)
    log.info(
        "wrote %s and %s (%d models, %d shift(s))",
        args.out_csv,
        args.out_json,
        results["model"].nunique(),
        len(lines),
    )
