"""The adversarial suite's table: rows = models; columns = clean top-1, then robust top-1 of every
(attack, eps). Cells are means over replicates; `–` where a value is undefined. Every number is
over the attacked images only (`adversarial.n_images`, the first of the test set): the caption
states that n and the test set, since the clean top-1 here is not the zero-shot table's (over
the whole set).
"""

from __future__ import annotations

import json

import pandas as pd

from vlstress.report import records
from vlstress.report.frames import cell as _cell
from vlstress.report.frames import render_frame_set

CAPTION = "Zero-shot top-1 (%) under adversarial attacks (ε in 1/255 of the attack's norm)"
COST_CAPTION = (
    "Attack success (% of the correctly classified images broken) and queries: model evaluations "
    "per image, a gradient step counting one; the cost of the score-based attacks (spsa, square, "
    "nes)"
)


def _conditions(rows: pd.DataFrame) -> pd.Series:
    return rows["condition_json"].map(json.loads)


def attacked(table: pd.DataFrame) -> str:
    """`n=4 images of objects` (each attack's n where they differ), from the long table's
    `n_images` of the adversarial records; the zero-shot records' n of the same set where there
    are some."""
    rows = records.rows(table, "adversarial")
    parts = []
    for dataset in dict.fromkeys(rows["dataset"].astype(str)):
        mine = rows[rows["dataset"].astype(str) == dataset]
        counts = {
            json.loads(c)["attack"]: n
            for c, n in mine.groupby("condition_json", sort=False)["n_images"].max().items()
        }
        values = set(counts.values())
        if len(values) == 1:
            n = next(iter(values))
            text = f"n={_count(n)} images of {dataset}"
        else:
            text = ", ".join(f"{a}: n={_count(n)}" for a, n in counts.items()) + f" of {dataset}"
        whole = records.rows(table, "zeroshot")
        whole = whole[whole["dataset"].astype(str) == dataset]["n_images"].max()
        if not pd.isna(whole):
            text += f" (the zero-shot table's top-1 is over all {_count(whole)})"
        parts.append(text)
    return "; ".join(parts)


def _count(n: object) -> str:
    return "?" if n is None or pd.isna(n) else f"{int(n)}"  # type: ignore[call-overload]


def adversarial_table(agg: pd.DataFrame) -> pd.DataFrame | None:
    rows = records.rows(agg, "adversarial")
    if rows.empty:
        return None
    rows = rows.assign(condition_dict=_conditions(rows))
    models = records.models(rows)
    cells: dict[str, dict[str, str]] = {}
    clean = rows[rows["metric"] == "top1_clean"].groupby("label", sort=False)["mean"].first()
    cells["clean top-1"] = {m: _cell(clean.get(m)) for m in models}
    robust = rows[rows["metric"] == "robust_top1"]
    for cond in dict.fromkeys(robust["condition_json"]):
        c = json.loads(cond)
        values = robust[robust["condition_json"] == cond].set_index("label")["mean"]
        cells[f"{c['attack']} ε={c['eps']:g}"] = {m: _cell(values.get(m)) for m in models}
    return pd.DataFrame(cells, index=pd.Index(models, name="model"))


def cost_table(agg: pd.DataFrame) -> pd.DataFrame | None:
    """Rows = models; a column per (attack, eps): `success % (queries q)`."""
    rows = records.rows(agg, "adversarial")
    if rows.empty:
        return None
    models = records.models(rows)
    cells: dict[str, dict[str, str]] = {}
    for cond in dict.fromkeys(rows["condition_json"]):
        c = json.loads(cond)
        mine = rows[rows["condition_json"] == cond]
        success = mine[mine["metric"] == "attack_success"].set_index("label")["mean"]
        queries = mine[mine["metric"] == "queries"].set_index("label")["mean"]
        cells[f"{c['attack']} ε={c['eps']:g}"] = {
            m: f"{_cell(success.get(m))} ({_cell(queries.get(m), 0)} q)" for m in models
        }
    return pd.DataFrame(cells, index=pd.Index(models, name="model"))


def render(table: pd.DataFrame, block: dict) -> tuple[str, str, list[str]]:
    agg = records.aggregate(table)
    over = attacked(table) if not records.rows(table, "adversarial").empty else ""
    suffix = f"; every column over the attacked images only: {over}" if over else ""
    frames = {
        "adversarial": (f"{CAPTION}{suffix}", adversarial_table(agg)),
        "adversarial-cost": (f"{COST_CAPTION}{suffix}", cost_table(agg)),
    }
    return render_frame_set("adversarial", frames, block)
