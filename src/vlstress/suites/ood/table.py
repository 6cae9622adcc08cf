"""The OOD suite's table: rows = models; columns = AUROC and FPR@95 of every (OOD set, score).
Cells are means over replicates; `–` where a value is undefined.
"""

from __future__ import annotations

import json

import pandas as pd

from vlstress.report import records
from vlstress.report.frames import cell as _cell
from vlstress.report.frames import render_frames

CAPTION = "OOD detection with the zero-shot classifier: AUROC and FPR at 95% TPR (%)"


def ood_table(agg: pd.DataFrame) -> pd.DataFrame | None:
    rows = records.rows(agg, "ood")
    if rows.empty:
        return None
    models = records.models(rows)
    cells: dict[str, dict[str, str]] = {}
    for cond in dict.fromkeys(rows["condition_json"]):
        c = json.loads(cond)
        for metric, title in (("auroc", "AUROC"), ("fpr95", "FPR@95")):
            values = rows[(rows["condition_json"] == cond) & (rows["metric"] == metric)].set_index(
                "label"
            )["mean"]
            cells[f"{c['ood']} {c['score']} {title}"] = {m: _cell(values.get(m)) for m in models}
    return pd.DataFrame(cells, index=pd.Index(models, name="model"))


def render(table: pd.DataFrame, block: dict) -> tuple[str, str, list[str]]:
    return render_frames("ood", CAPTION, ood_table(records.aggregate(table)), block)
