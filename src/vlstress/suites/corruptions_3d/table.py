"""The 3D Common Corruptions table: rows = models; the image tower, the clean top-1 error, each
corruption's error (100 - top-1, the mean over its measured severities: ImageNet-C's corruption
error before any baseline's division) and their mean over corruptions. Cells are means over
replicates; no interval (each mean re-uses the same images: the figure draws the Wilson bands)."""

from __future__ import annotations

import json

import pandas as pd

from vlstress.report import records
from vlstress.report.frames import cell, render_frame_set
from vlstress.suites.corruptions_3d.towers import towers

TASK = "corruption_3d"  # paths.TASK, written out: a report step imports no suite path module
CAPTION = (
    "Top-1 error (%) under 3D common corruptions: per corruption the mean over its measured "
    "severities, and the mean over corruptions; clean: the error on the clean test set"
)


def error_table(agg: pd.DataFrame, tower: dict[str, str]) -> tuple[pd.DataFrame | None, list[str]]:
    """The table and its notes (severities and depth) from the aggregated summary."""
    rows = records.rows(agg, TASK)
    if rows.empty:
        return None, []
    conditions = rows["condition_json"].map(json.loads)
    rows = rows.assign(
        corruption=conditions.map(lambda c: c.get("corruption")),
        severity=conditions.map(lambda c: c.get("severity")),
        depth=conditions.map(lambda c: c.get("depth")),
    )
    models = records.models(rows)
    top1 = rows[rows["metric"] == "top1"]
    clean = rows[rows["metric"] == "top1_clean"].groupby("label")["mean"].mean()
    per = top1.groupby(["label", "corruption"], sort=False)["mean"].mean().unstack()
    corruptions = list(dict.fromkeys(top1["corruption"]))
    cells: dict[str, dict[str, str]] = {
        "tower": {m: tower.get(m, "unknown") for m in models},
        "clean": {m: cell(100 - clean[m]) if m in clean else cell(None) for m in models},
    }
    for name in corruptions:
        cells[name.replace("_", " ")] = {m: cell(100 - per.loc[m, name]) for m in models}
    cells["mean"] = {m: cell(100 - per.loc[m, corruptions].mean()) for m in models}
    severities = sorted({int(s) for s in top1["severity"]})
    notes = [
        "each corruption: the mean error over severities " + ", ".join(map(str, severities)),
        "depth: " + "; ".join(sorted({str(d) for d in rows["depth"].dropna()}) or ["unstated"]),
    ]
    return pd.DataFrame(cells, index=pd.Index(models, name="model")), notes


def render(table: pd.DataFrame, block: dict) -> tuple[str, str, list[str]]:
    rows = records.rows(table, TASK)
    frame, notes = error_table(records.aggregate(table), towers(rows) if len(rows) else {})
    return render_frame_set("corruptions_3d", {"errors": (CAPTION, frame)}, block, notes)
