"""Robustness summaries of one run's zero-shot records (`vlstress robustness`), from the long
summary table (`vlstress summarize`).

- the corruption top-1 per (model, corruption, severity) and the clean top-1 per model, the
  inputs of the corruption table (mCA, relative drop, mCE: vlstress.suites.corruptions, which
  the command calls; this suite does not import it);
- effective robustness: every shift (each test set other than the in-distribution one, the
  mean over corruptions, the typographic attack) against the in-distribution test set, with a
  line fitted over this run's models (vlstress.suites.zeroshot.robustness), and the scatter.
  With fewer than two models its columns are null and a note says why.

Also the command's flags (`add_arguments`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from vlstress.argtypes import optional_str


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Every flag of `vlstress robustness`."""
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
        "--out-md",
        type=Path,
        default=None,
        help="Markdown: CE per corruption, mCE, mCA; effective robustness per shift (optional)",
    )
    parser.add_argument(
        "--out-json",
        required=True,
        type=Path,
        help="the numbers per model, the lines, the note and the provenance (JSON)",
    )
    parser.add_argument(
        "--out-scores",
        required=True,
        type=Path,
        help="folder of DVC metrics: <model>.json, that model's numbers (provenance: --out-json)",
    )
    parser.add_argument(
        "--out-fig",
        required=True,
        type=Path,
        help="effective-robustness scatter (PNG + PDF beside it)",
    )


def corruption_top1(table):
    """The corruption records' top-1 (model, corruption, severity, top1) and the clean top-1 per
    model."""
    import pandas as pd

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
    return top1, clean


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


def effective(table, in_distribution: str, corruptions, transform: str, fit: str):
    """(effective robustness per (shift, model) in fractions, the line per shift, and the note
    that says why there is none: no lines means the ER columns are null)."""
    from vlstress.errors import VlstressError
    from vlstress.suites.zeroshot import robustness

    shifts = shift_table(table, in_distribution, corruptions)
    n_models = shifts["model"].nunique()
    note = None
    if shifts.empty:
        note = (
            f"no shifted accuracies: only the in-distribution test set {in_distribution!r} "
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
            lines = robustness.fit_lines(percent, "all", transform, fit)
        except VlstressError as exc:
            note = f"no baseline line over this run's models: {exc}"
    if lines:
        found = robustness.effective_robustness(percent, "all", transform, fit, lines=lines)
    else:
        found = percent.assign(
            predicted=None,
            effective_robustness=None,
            relative_robustness=percent["shifted_accuracy"] - percent["id_accuracy"],
        )
    return found, lines, note


def csv_text(frame, float_format: str) -> str:
    """One of the command's CSV tables (the corruptions, the effective robustness) as text."""
    return frame.to_csv(index=False, lineterminator="\n", float_format=float_format)


def numbers(corruptions, found, lines, note: str | None, block: dict[str, Any]) -> dict:
    """The JSON body (DVC metrics): the numbers per model, the lines, the note, the provenance."""
    models: dict = {}
    for row in corruptions.itertuples(index=False):
        models.setdefault(row.model, {}).update(
            {k: _number(getattr(row, k)) for k in ("mCA", "relative_drop", "mCE", "relative_mCE")}
        )
        if row.mCE_note:
            models[row.model]["mCE_note"] = row.mCE_note
    for row in found.itertuples(index=False):
        models.setdefault(row.model, {})[f"ER {row.shift}"] = _number(row.effective_robustness, 100)
        models[row.model][f"RR {row.shift}"] = _number(row.relative_robustness, 100)
    return {
        "models": models,
        "lines": {s: line.to_dict() for s, line in lines.items()},
        "note": note,
        "provenance": block,
    }


def scores(numbers_body: dict) -> dict[str, dict]:
    """DVC metrics: one file per model (a row of `dvc metrics show`), its numbers only."""
    from vlstress.io import score_name

    return {
        score_name(model): {k: v for k, v in values.items() if not isinstance(v, str)}
        for model, values in numbers_body["models"].items()
    }


def figure(
    found,
    lines,
    note: str | None,
    in_distribution: str,
    names: dict[str, str],
    families: dict[str, str] | None = None,
    n_note: str | None = None,
):
    """The effective-robustness scatter, or a placeholder that says why there is none (after
    vlstress.report.figures.setup); `names`: model -> its label in the summary; `families`: model
    -> its kind (open_clip, timm), drawn as marker shapes; `n_note`: the images behind each
    accuracy, stated under the panels."""
    from vlstress.errors import VlstressError
    from vlstress.report import figures
    from vlstress.suites.zeroshot.robustness_figure import draw

    if lines:
        fitted = max(line.n for line in lines.values())
        caption = (
            f"Note: the line is fitted over this run's {fitted} models themselves; with two it "
            "passes through both, so ER is 0 by construction. Add models, or place them among "
            "published ones with `vlstress effective-robustness`."
            if fitted <= 2
            else None
        )
        caption = " ".join(part for part in (n_note, caption) if part) or None
        return draw(
            found,
            lines,
            highlight=sorted(found["model"].unique()),
            id_name=in_distribution,
            caption=caption,
            names=names,
            families=families,
        )
    if note is None:  # fit_lines fits a line per shift or raises
        raise VlstressError("no effective-robustness line was fitted, and no reason was given")
    return figures.placeholder("Effective robustness", note)


def _number(value, scale: float = 1.0):
    import math

    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else round(scale * value, 4)
