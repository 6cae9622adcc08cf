"""The video suite's table: rows = models; per video test set, pm-0, pm-k and the drop between them
(% of anchors)."""

from __future__ import annotations

import json

import pandas as pd

from vlstress.report import records
from vlstress.report.frames import cell, render_frames

CAPTION = "Accuracy across time: pm-0 and pm-k (% of anchors right on every frame within k)"


def video_table(agg: pd.DataFrame) -> pd.DataFrame | None:
    rows = records.rows(agg, "video")
    if rows.empty:
        return None
    models = records.models(rows)
    cells: dict[str, dict[str, str]] = {}
    for cond in dict.fromkeys(rows["condition_json"]):
        name = json.loads(cond)["set"]
        mine = rows[rows["condition_json"] == cond]
        ks = sorted(int(m[2:]) for m in mine["metric"] if m.startswith("pm") and m[2:].isdigit())
        for metric, title in (("pm0", "pm-0"), (f"pm{ks[-1]}", f"pm-{ks[-1]}"), ("drop", "drop")):
            values = mine[mine["metric"] == metric].set_index("label")["mean"]
            cells[f"{name} {title}"] = {m: cell(values.get(m)) for m in models}
    return pd.DataFrame(cells, index=pd.Index(models, name="model"))


def render(table: pd.DataFrame, block: dict) -> tuple[str, str, list[str]]:
    return render_frames("video", CAPTION, video_table(records.aggregate(table)), block)
