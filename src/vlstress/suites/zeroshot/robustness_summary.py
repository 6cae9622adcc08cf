"""Robustness summaries of one run's zero-shot records (`vlstress robustness`), from the long
summary table (`vlstress summarize`).

- the corruption top-1 per (model, corruption, severity) and the clean top-1 per model, the
  inputs of the corruption table (mCA, relative drop, mCE: vlstress.suites.corruptions, which
  the command calls; this suite does not import it);
- effective robustness: every shift (each test set other than the in-distribution one, the
  mean over corruptions, the typographic attack) against the in-distribution test set, placed
  against the line of imagenet-testbed's ImageNet-trained models where the shift has one, else
  the line fitted over this run's models, each row and panel naming its line
  (vlstress.suites.zeroshot.robustness_lines), and the scatter. A shift with neither (fewer than
  two models of the run) has null ER columns and a note says why.

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
        "--params",
        action="append",
        type=Path,
        default=None,
        help="params file(s) of the run: the kind of each test set (zeroshot.testsets)",
    )
    parser.add_argument(
        "--baselines",
        default="testbed",
        help=(
            "the line of each shift: testbed (imagenet-testbed's ImageNet-trained models, where "
            "the shift has a testbed column; default) | run (this run's models) | a CSV file in "
            "the testbed table's layout (percent)"
        ),
    )
    parser.add_argument(
        "--bootstrap",
        type=int,
        default=1000,
        help="resamples of the published baselines for the 95%% band and ER interval; 0 = none",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap")
    parser.add_argument(
        "--confidence", type=float, default=0.95, help="of the mCA and mCE intervals"
    )
    parser.add_argument(
        "--interval-bootstrap",
        type=int,
        default=1000,
        help="resamples of the test images for the mCA and mCE intervals (BCa; seeded with --seed)",
    )
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
        "--out-tex",
        type=Path,
        default=None,
        help="LaTeX: the effective-robustness table (optional)",
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


def testset_kinds(params_files: list[Path] | None) -> dict[str, str]:
    """Test set -> its kind (zeroshot.testsets), from the run's params files; none given: {}."""
    if not params_files:
        return {}
    from vlstress.params import Params
    from vlstress.suites.zeroshot.block import ZeroshotParams

    block = Params.load(params_files).block(ZeroshotParams)
    return {name: entry.kind for name, entry in block.testsets.items()}


def reference_path(baselines: str) -> Path:
    """The file of published baselines (`testbed`, or a CSV file)."""
    from vlstress.suites.zeroshot.baselines import TESTBED, published_path

    return published_path(TESTBED) if baselines == TESTBED else Path(baselines)


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
            # the kind of the corrupted images' source: comparable with AlexNet's errors or not
            "images": conditions.map(lambda c: c.get("images")),
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


def effective(
    table,
    in_distribution: str,
    corruptions,
    transform: str,
    fit: str,
    kinds: dict[str, str] | None = None,
    baselines: str = "run",
    n_resamples: int = 0,
    seed: int = 0,
):
    """(effective robustness per (shift, model) in fractions, the line of each shift
    (robustness_lines.ShiftLine), and the note that says why a shift has none: its ER columns are
    null). `kinds`: test set -> its kind; `baselines`: `testbed`, a CSV file, or `run` (the line
    over this run's models for every shift, as before the testbed line existed)."""
    from vlstress.suites.zeroshot import robustness_lines

    shifts = shift_table(table, in_distribution, corruptions)
    percent = shifts.assign(
        id_accuracy=shifts["id_accuracy"] / 100, shifted_accuracy=shifts["shifted_accuracy"] / 100
    )
    if shifts.empty:
        note = (
            f"no shifted accuracies: only the in-distribution test set {in_distribution!r} "
            "was evaluated"
        )
        empty = percent.assign(predicted=None, effective_robustness=None, relative_robustness=None)
        return empty, {}, note
    reference = robustness_lines.read_reference(baselines)
    found, lines, notes = robustness_lines.place(
        percent, kinds or {}, in_distribution, reference, transform, fit, n_resamples, seed
    )
    n_models = shifts["model"].nunique()
    if n_models < 2 and notes:  # today's wording where the run alone cannot make a line
        notes = [
            f"effective robustness needs a line over at least 2 models; this run has {n_models}"
            + ("" if not lines else f" (placed against published lines: {', '.join(lines)})")
        ]
    return found, lines, "; ".join(notes) or None


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
        low = _number(getattr(row, "effective_robustness_low_pp", None))
        if low is not None:  # the bootstrap interval of ER against a published line
            models[row.model][f"ER {row.shift} low"] = low
            models[row.model][f"ER {row.shift} high"] = _number(row.effective_robustness_high_pp)
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
    vlstress.report.figures.setup); `lines`: shift -> robustness_lines.ShiftLine (each panel
    names its line; published baselines are the grey cloud, with the bootstrap band); `names`:
    model -> its label in the summary; `families`: model -> its kind (open_clip, timm), drawn as
    marker shapes; `n_note`: the images behind each accuracy, stated under the panels."""
    from vlstress.errors import VlstressError
    from vlstress.report import figures
    from vlstress.suites.zeroshot.robustness_figure import draw

    if lines:
        run_fits = [shift.line.n for shift in lines.values() if shift.cloud is None]
        caption = (
            f"Note: a line over the run's own models is fitted over {max(run_fits)} of them; "
            "through two it passes through both, so their ER is 0 by construction. Add models, "
            "or place them against the testbed line (zeroshot.robustness.baselines: testbed, "
            "with an ImageNet in-distribution set)."
            if run_fits and max(run_fits) <= 2
            else None
        )
        caption = " ".join(part for part in (n_note, note and f"Note: {note}.", caption) if part)
        shown = found[found["shift"].isin(list(lines))]
        return draw(
            shown,
            {shift: entry.line for shift, entry in lines.items()},
            highlight=sorted(shown["model"].unique()),
            id_name=in_distribution,
            caption=caption or None,
            names=names,
            families=families,
            clouds={s: e.cloud for s, e in lines.items() if e.cloud is not None},
            bands={s: e.band for s, e in lines.items() if e.band is not None},
            titles={s: e.text for s, e in lines.items()},
        )
    if note is None:  # every shift has a line, or a note says why not
        raise VlstressError("no effective-robustness line was fitted, and no reason was given")
    return figures.placeholder("Effective robustness", note)


def _number(value, scale: float = 1.0):
    import math

    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else round(scale * value, 4)
