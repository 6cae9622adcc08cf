"""The assistant suite's table: rows = models (assistants and classifiers), their kind, and per
test set the accuracy among the options and, for an assistant, the share of unparseable answers
(% of questions), each with its 95% Wilson interval `[lo, hi]` over the n questions (an `n` column
per test set). Cells are means over replicates (a mean is a fractional count for the interval)."""

from __future__ import annotations

import json

import pandas as pd

from vlstress.embedding.kinds import model_kind
from vlstress.report import records
from vlstress.report.frames import MISSING, count_cell, render_frames, share_cell
from vlstress.suites.assistant.names import KINDS, TASK


def caption(rows: pd.DataFrame) -> str:
    conditions = [json.loads(c) for c in dict.fromkeys(rows["condition_json"])]
    asked = "; ".join(
        f"{c['options']} options, wrong ones {c['options_from']}'s top confusions (chance "
        f"{100 / c['options']:.0f} %)"
        for c in conditions
    )
    return (
        "Multiple-choice accuracy (%) among the true class and a classifier's top confusions: "
        f"{asked}. Assistants answer by greedy generation (an answer naming no single option is "
        "wrong, and counted as unparseable); classifiers pick the option of highest zero-shot "
        "score. [lo, hi]: 95% Wilson interval over the n questions"
    )


def multiple_choice_table(agg: pd.DataFrame) -> tuple[str, pd.DataFrame] | None:
    rows = records.rows(agg, TASK)
    if rows.empty:
        return None
    arch = rows.drop_duplicates("label").set_index("label")["arch"]
    models = sorted(records.models(rows), key=lambda m: model_kind(arch[m]) != "llava")
    cells: dict[str, dict[str, str]] = {"kind": {m: KINDS[model_kind(arch[m])] for m in models}}
    assistants = [m for m in models if model_kind(arch[m]) == "llava"]
    for dataset in dict.fromkeys(rows["dataset"]):
        mine = rows[rows["dataset"] == dataset]
        asked = questions(mine)
        accuracy = mine[mine["metric"] == "accuracy"].set_index("label")["mean"]
        cells[f"{dataset} n"] = {m: count_cell(asked.get(m)) for m in models}
        cells[f"{dataset} accuracy"] = {
            m: share_cell(accuracy.get(m), asked.get(m)) for m in models
        }
        if assistants:
            unparseable = mine[mine["metric"] == "unparseable"].set_index("label")["mean"]
            cells[f"{dataset} unparseable"] = {
                m: share_cell(unparseable.get(m), asked.get(m)) if m in assistants else MISSING
                for m in models
            }
    return caption(rows), pd.DataFrame(cells, index=pd.Index(models, name="model"))


def questions(rows: pd.DataFrame) -> pd.Series:
    """Model -> the questions of one test set (the records' `n_questions`, mean over
    replicates)."""
    return rows[rows["metric"] == "n_questions"].set_index("label")["mean"]


def render(table: pd.DataFrame, block: dict) -> tuple[str, str, list[str]]:
    found = multiple_choice_table(records.aggregate(table))
    if found is None:
        return render_frames("assistant", "Multiple-choice accuracy", None, block)
    return render_frames("assistant", found[0], found[1], block)
