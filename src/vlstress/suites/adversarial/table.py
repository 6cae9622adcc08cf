"""The adversarial suite's table: rows = models; columns = clean top-1, then robust top-1 of every
(attack, eps). Cells are means over replicates; `–` where a value is undefined.
"""

from __future__ import annotations

import json

import pandas as pd

from vlstress.report import records
from vlstress.report.frames import cell as _cell
from vlstress.report.frames import render_frames

CAPTION = "Zero-shot top-1 (%) under adversarial attacks (ε in 1/255 of the attack's norm)"


def _conditions(rows: pd.DataFrame) -> pd.Series:
    return rows["condition_json"].map(json.loads)


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


def render(table: pd.DataFrame, block: dict) -> tuple[str, str, list[str]]:
    return render_frames("adversarial", CAPTION, adversarial_table(records.aggregate(table)), block)
