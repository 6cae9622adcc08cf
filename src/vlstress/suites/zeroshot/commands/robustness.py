"""`vlstress robustness`: robustness summaries of this run's zero-shot records.

From the long summary table (`vlstress summarize`):
- corruptions: mean corruption accuracy, relative drop, mCE and relative mCE against a
  baseline model (vlstress.zeroshot.corruption_error);
- effective robustness: every shift (each test set other than the in-distribution one,
  the mean over corruptions, the typographic attack) against the in-distribution test
  set, with a line fitted over this run's models (vlstress.robustness), and the scatter.
Effective robustness needs at least two models; with fewer its columns are null and the
figure says why. To place models among published ones, use `vlstress effective-robustness`
on a table of accuracies.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from vlstress.argtypes import optional_str

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--summary", required=True, type=Path, help="long CSV of `vlstress summarize`"
    )
    parser.add_argument(
        "--in-distribution", required=True, help="test set whose accuracy is the x axis"
    )
    parser.add_argument(
        "--mce-baseline",
        type=optional_str,
        default=None,
        help="model slug that normalises the corruption error",
    )
    parser.add_argument("--transform", choices=("logit", "probit", "linear"), default="logit")
    parser.add_argument("--fit", choices=("ols", "huber"), default="ols")
    parser.add_argument(
        "--out-corruptions", required=True, type=Path, help="CSV: mCA, relative drop, mCE per model"
    )
    parser.add_argument(
        "--out-effective", required=True, type=Path, help="CSV: ER and RR per (shift, model)"
    )
    parser.add_argument(
        "--out-json", required=True, type=Path, help="the numbers per model (DVC metrics)"
    )
    parser.add_argument(
        "--out-fig",
        required=True,
        type=Path,
        help="effective-robustness scatter (PNG + PDF beside it)",
    )


def shift_table(table, in_distribution: str, corruptions):
    """Long table model, shift, id_accuracy, shifted_accuracy (percent) from the summary rows."""
    import pandas as pd

    from vlstress.errors import VlstressError

    top1 = table[table["metric"] == "top1"]
    zeroshot = top1[top1["task"] == "zeroshot"]
    ident = zeroshot[zeroshot["dataset"] == in_distribution].set_index("model")["value"]
    if ident.empty:
        raise VlstressError(
            f"no zero-shot records of the in-distribution test set {in_distribution!r}"
        )
    rows = []
    for (model, dataset), value in zeroshot.groupby(["model", "dataset"])["value"].mean().items():
        if dataset != in_distribution:
            rows.append((model, dataset, value))
    for model, value in (
        top1[top1["task"] == "typographic"].groupby("model")["value"].mean().items()
    ):
        rows.append((model, "typographic attack", value))
    for model, value in corruptions.set_index("model")["mCA"].items():
        rows.append((model, "corruptions (mean)", value))
    frame = pd.DataFrame(rows, columns=["model", "shift", "shifted_accuracy"])
    frame["id_accuracy"] = frame["model"].map(ident)
    return frame.dropna(subset=["id_accuracy"])


def run(args: argparse.Namespace) -> None:
    import pandas as pd

    from vlstress import provenance
    from vlstress.errors import VlstressError
    from vlstress.io import sha256_file, write_json, write_text
    from vlstress.report import figures, records
    from vlstress.suites.corruptions.corruption_error import corruption_table
    from vlstress.suites.zeroshot import robustness
    from vlstress.suites.zeroshot.robustness_figure import draw

    table = records.read_summary(args.summary)
    rows = table[(table["task"] == "corruption") & (table["metric"] == "top1")]
    conditions = rows["condition_json"].map(json.loads)
    top1 = pd.DataFrame(
        {
            "model": rows["model"],
            "corruption": conditions.map(lambda c: c["corruption"]),
            "severity": conditions.map(lambda c: c["severity"]),
            "top1": rows["value"],
        }
    )
    clean = (
        table[(table["task"] == "corruption") & (table["metric"] == "top1_clean")]
        .groupby("model")["value"]
        .first()
        .to_dict()
    )
    corruptions = corruption_table(top1, clean, args.mce_baseline if not top1.empty else None)

    shifts = shift_table(table, args.in_distribution, corruptions)
    n_models = shifts["model"].nunique()
    note = None
    if shifts.empty:
        note = (
            f"no shifted accuracies: only the in-distribution test set {args.in_distribution!r} "
            "was evaluated"
        )
    elif n_models < 2:
        note = f"effective robustness needs a line over at least 2 models; this run has {n_models}"
    percent = shifts.assign(
        id_accuracy=shifts["id_accuracy"] / 100, shifted_accuracy=shifts["shifted_accuracy"] / 100
    )
    lines = {}
    if note is None:
        try:  # e.g. every model at the same in-distribution accuracy: no line through them
            lines = robustness.fit_lines(percent, "all", args.transform, args.fit)
        except VlstressError as exc:
            note = f"no baseline line over this run's models: {exc}"
    if lines:
        effective = robustness.effective_robustness(
            percent, "all", args.transform, args.fit, lines=lines
        )
    else:
        log.warning("%s: effective robustness left null", note)
        effective = percent.assign(
            predicted=None,
            effective_robustness=None,
            relative_robustness=percent["shifted_accuracy"] - percent["id_accuracy"],
        )

    params = {
        "in_distribution": args.in_distribution,
        "mce_baseline": args.mce_baseline,
        "transform": args.transform,
        "fit": args.fit,
    }
    block = provenance.build(
        "robustness", params, inputs={str(args.summary): sha256_file(args.summary)}
    )
    write_text(
        args.out_corruptions,
        corruptions.to_csv(index=False, lineterminator="\n", float_format="%.4f"),
    )
    write_text(
        args.out_effective, effective.to_csv(index=False, lineterminator="\n", float_format="%.6f")
    )
    numbers: dict = {}
    for row in corruptions.itertuples(index=False):
        numbers.setdefault(row.model, {}).update(
            {k: _number(getattr(row, k)) for k in ("mCA", "relative_drop", "mCE", "relative_mCE")}
        )
    for row in effective.itertuples(index=False):
        numbers.setdefault(row.model, {})[f"ER {row.shift}"] = _number(
            row.effective_robustness, 100
        )
        numbers[row.model][f"RR {row.shift}"] = _number(row.relative_robustness, 100)
    write_json(
        args.out_json,
        {
            "models": numbers,
            "lines": {s: line.to_dict() for s, line in lines.items()},
            "note": note,
            "provenance": block,
        },
    )

    figures.setup()
    if lines:
        fig = draw(
            effective,
            lines,
            highlight=sorted(effective["model"].unique()),
            id_name=args.in_distribution,
        )
    else:
        if note is None:  # fit_lines fits a line per shift or raises
            raise VlstressError("no effective-robustness line was fitted, and no reason was given")
        fig = figures.placeholder("Effective robustness", note)
    figures.save(fig, args.out_fig, block)


def _number(value, scale: float = 1.0):
    import math

    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else round(scale * value, 4)
