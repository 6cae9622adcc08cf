"""The adversarial suite's table: rows = models; columns = n, clean top-1, then robust top-1 of
every (attack, eps), each `value [lo, hi]` with its 95% Wilson interval over the attacked images;
the cost table's attack success is a share of the correctly classified images (its own n column).
Cells are means over replicates (a fractional count for the interval); `–` where a value is
undefined. Every number is over the attacked images only (`adversarial.n_images`, the first of
the test set): the caption states that n and the test set, since the clean top-1 here is not the
zero-shot table's (over the whole set).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from vlstress.report import records
from vlstress.report.frames import MISSING, render_frame_set, share_cell
from vlstress.report.frames import cell as _cell

CAPTION = (
    "Zero-shot top-1 (%) under adversarial attacks (ε in 1/255 of the attack's norm), "
    "[95% Wilson interval] over the n attacked images"
)
COST_CAPTION = (
    "Attack success (% of the correctly classified images broken) [95% Wilson interval over the "
    "n correct ones] and queries: model evaluations per image, a gradient step counting one; the "
    "cost of the score-based attacks (spsa, square, nes)"
)

Counts = dict[tuple[str, str], float]  # (model label, condition_json) -> attacked images


def attacked_counts(table: pd.DataFrame) -> Counts:
    """The attacked images of every (model, condition) of the long table (its `n_images`)."""
    rows = records.rows(table, "adversarial")
    if rows.empty or "n_images" not in rows:
        return {}
    n = pd.to_numeric(rows["n_images"], errors="coerce").astype("float64")
    found = n.groupby([rows["label"], rows["condition_json"]], sort=False).max()
    return {key: float(v) for key, v in found.items() if pd.notna(v)}


def _joined(values: list[float | None]) -> str:
    """`4`, `4/8` where conditions differ, `–` where unknown (fractional counts to 3 digits)."""
    known = dict.fromkeys(f"{v:.3g}" for v in values if v is not None and np.isfinite(v))
    return "/".join(known) or MISSING


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


def adversarial_table(agg: pd.DataFrame, counts: Counts | None = None) -> pd.DataFrame | None:
    """Rows = models; columns = n (attacked images), clean top-1, robust top-1 of every (attack,
    eps): `value [lo, hi]` over n (`counts`: `attacked_counts` of the long table)."""
    rows = records.rows(agg, "adversarial")
    if rows.empty:
        return None
    counts = counts or {}
    models = records.models(rows)
    cells: dict[str, dict[str, str]] = {
        "n": {m: _joined([n for (label, _), n in counts.items() if label == m]) for m in models}
    }
    clean = rows[rows["metric"] == "top1_clean"].groupby("label", sort=False).first()
    cells["clean top-1"] = {
        m: share_cell(clean["mean"].get(m), counts.get((m, clean["condition_json"].get(m, ""))))
        for m in models
    }
    robust = rows[rows["metric"] == "robust_top1"]
    for cond in dict.fromkeys(robust["condition_json"]):
        c = json.loads(cond)
        values = robust[robust["condition_json"] == cond].set_index("label")["mean"]
        cells[f"{c['attack']} ε={c['eps']:g}"] = {
            m: share_cell(values.get(m), counts.get((m, cond))) for m in models
        }
    return pd.DataFrame(cells, index=pd.Index(models, name="model"))


def cost_table(agg: pd.DataFrame, counts: Counts | None = None) -> pd.DataFrame | None:
    """Rows = models; `n correct` (the correctly classified of the attacked images: what success
    is a share of), then a column per (attack, eps): `success [lo, hi] (queries q)`."""
    rows = records.rows(agg, "adversarial")
    if rows.empty:
        return None
    counts = counts or {}
    models = records.models(rows)
    cells: dict[str, dict[str, str]] = {}
    correct: dict[str, list[float | None]] = {m: [] for m in models}
    for cond in dict.fromkeys(rows["condition_json"]):
        c = json.loads(cond)
        mine = rows[rows["condition_json"] == cond]
        success = mine[mine["metric"] == "attack_success"].set_index("label")["mean"]
        queries = mine[mine["metric"] == "queries"].set_index("label")["mean"]
        clean = mine[mine["metric"] == "top1_clean"].set_index("label")["mean"]
        column = {}
        for m in models:
            attacked, top1 = counts.get((m, cond)), clean.get(m)
            n = None if attacked is None or top1 is None else top1 / 100.0 * attacked
            correct[m].append(n)
            column[m] = f"{share_cell(success.get(m), n)} ({_cell(queries.get(m), 0)} q)"
        cells[f"{c['attack']} ε={c['eps']:g}"] = column
    cells = {"n correct": {m: _joined(correct[m]) for m in models}, **cells}
    return pd.DataFrame(cells, index=pd.Index(models, name="model"))


def render(table: pd.DataFrame, block: dict) -> tuple[str, str, list[str]]:
    agg = records.aggregate(table)
    counts = attacked_counts(table)
    over = attacked(table) if not records.rows(table, "adversarial").empty else ""
    suffix = f"; every column over the attacked images only: {over}" if over else ""
    frames = {
        "adversarial": (f"{CAPTION}{suffix}", adversarial_table(agg, counts)),
        "adversarial-cost": (f"{COST_CAPTION}{suffix}", cost_table(agg, counts)),
    }
    return render_frame_set("adversarial", frames, block)
