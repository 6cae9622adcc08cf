"""`vlstress robustness`: robustness summaries of this run's zero-shot records.

From the long summary table (`vlstress summarize`):
- corruptions: mean corruption accuracy, relative drop, mCE and relative mCE against a
  baseline model (vlstress.suites.zeroshot.corruption_error);
- the two as Markdown tables (`--out-md`: CE per corruption, mCE, mCA; effective robustness
  per shift; vlstress.suites.zeroshot.robustness_tables);
- effective robustness: every shift (each test set other than the in-distribution one,
  the mean over corruptions, the typographic attack) against the in-distribution test
  set, placed against the line of imagenet-testbed's ImageNet-trained models where the shift
  has one (--baselines testbed, the default; a 95% bootstrap band), else the line fitted over
  this run's models; every row and panel names its line
  (vlstress.suites.zeroshot.robustness_summary, which also holds the flags, and
  robustness_lines), and the scatter; `--out-tex` writes the tables in LaTeX.
A shift placed against the run's own models needs at least two of them; with fewer its
columns are null and the figure says why.
"""

from __future__ import annotations

import argparse
import logging

from vlstress.suites.zeroshot import robustness_summary as summary

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    summary.add_arguments(parser)


def _with_intervals(args: argparse.Namespace, corruptions, top1, baseline: str | None):
    """mCA, mCE and relative mCE with their bootstrap intervals over the test images, from the
    params' records and outcomes (vlstress.suites.zeroshot.corruption_intervals)."""
    from vlstress import params as params_module
    from vlstress.pipeline import outcome_paths, record_paths
    from vlstress.report.items import case_outcomes
    from vlstress.report.records import read_records
    from vlstress.suites.zeroshot import corruption_intervals as found

    if not args.params:
        return found.with_intervals(corruptions, {})
    merged = params_module.load(args.params)
    records = read_records(record_paths(merged))
    blocks = case_outcomes(records, outcome_paths(merged))
    cells = found.cells_of(zip(top1["corruption"], top1["severity"]))
    grids = found.grids_from(records, blocks, cells)
    bounds = found.intervals(
        grids, baseline, cells, args.confidence, args.interval_bootstrap, args.seed
    )
    return found.with_intervals(corruptions, bounds)


def run(args: argparse.Namespace) -> None:
    from vlstress import provenance
    from vlstress.embedding.kinds import model_kind
    from vlstress.io import sha256_file, write_json, write_scores, write_text
    from vlstress.report import figures, records
    from vlstress.suites.zeroshot.corruption_error import corruption_table

    # a fine-tuned variant of a random-init model is labelled so, in the tables and the figure
    table = figures.mark_random_init(records.read_summary(args.summary))
    top1, clean = summary.corruption_top1(table)
    baseline = args.mce_baseline if not top1.empty else None
    corruptions = corruption_table(top1, clean, baseline)
    if not top1.empty:
        corruptions = _with_intervals(args, corruptions, top1, baseline)
    kinds = summary.testset_kinds(args.params)
    effective, lines, note = summary.effective(
        table,
        args.in_distribution,
        corruptions,
        args.transform,
        args.fit,
        kinds,
        args.baselines,
        args.bootstrap,
        args.seed,
    )
    if note:
        log.warning("%s: effective robustness left null there", note)
    params = {
        "in_distribution": args.in_distribution,
        "confidence": args.confidence,
        "interval_bootstrap": args.interval_bootstrap,
        "mce_baseline": args.mce_baseline,
        "transform": args.transform,
        "fit": args.fit,
        "baselines": args.baselines,
        "bootstrap": args.bootstrap,
        "seed": args.seed,
        "testset_kinds": kinds,
    }
    inputs = {str(args.summary): sha256_file(args.summary)}
    for entry in lines.values():  # the published table behind a line
        if entry.cloud is not None:
            reference = summary.reference_path(args.baselines)
            inputs[str(reference)] = sha256_file(reference)
            break
    block = provenance.build("robustness", params, inputs=inputs)
    write_text(args.out_corruptions, summary.csv_text(corruptions, "%.4f"))
    write_text(args.out_effective, summary.csv_text(effective, "%.6f"))
    if args.out_md is not None:
        from vlstress.io import dumps_json
        from vlstress.suites.zeroshot.robustness_tables import markdown

        labels = dict(zip(table["model"], table["label"]))
        text = markdown(
            corruptions,
            top1,
            args.mce_baseline if not top1.empty else None,
            effective,
            args.in_distribution,
            note,
            labels,
            args.transform,
            args.bootstrap,
        )
        write_text(args.out_md, f"{text}\n\n<!-- provenance\n{dumps_json(block)}-->\n")
    if args.out_tex is not None:
        from vlstress.suites.zeroshot.robustness_tables import latex

        labels = dict(zip(table["model"], table["label"]))
        from vlstress.io import dumps_json

        text = latex(effective, args.in_distribution, labels, args.transform, args.bootstrap)
        stamp = "".join(f"% {line}\n" for line in dumps_json(block).splitlines())
        write_text(args.out_tex, f"{text}\n% provenance\n{stamp}")
    body = summary.numbers(corruptions, effective, lines, note, block)
    write_json(args.out_json, body)
    write_scores(args.out_scores, summary.scores(body))
    figures.setup()
    names = dict(zip(table["model"], table["label"]))  # one readable label everywhere
    families = {model: model_kind(arch) for model, arch in zip(table["model"], table["arch"])}
    zeroshot = table[(table["task"] == "zeroshot") & (table["metric"] == "top1")]
    n_note = figures.sample_note(zeroshot[zeroshot["model"].isin(effective.get("model", []))])
    fig = summary.figure(
        effective, lines, note, args.in_distribution, names, families, n_note=n_note
    )
    figures.save(fig, args.out_fig, block)
