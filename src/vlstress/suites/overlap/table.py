"""The overlap suite's table: rows = models; per test set, top-1 on the near-duplicates of training
images, on the clean rest, the gap, and how many images were flagged."""

from __future__ import annotations

import json

import pandas as pd

from vlstress.report import records
from vlstress.report.frames import cell, render_frames

CAPTION = (
    "Zero-shot top-1 (%) on the test images with a near-duplicate in the training collection and "
    "on the rest (the detector's flags; n = flagged images)"
)


def overlap_table(agg: pd.DataFrame) -> pd.DataFrame | None:
    rows = records.rows(agg, "overlap")
    if rows.empty:
        return None
    models = records.models(rows)
    cells: dict[str, dict[str, str]] = {}
    for cond in dict.fromkeys(rows["condition_json"]):
        name = json.loads(cond)["set"]
        mine = rows[rows["condition_json"] == cond]
        for metric, title, digits in (
            ("top1_overlap", "overlap", 1),
            ("top1_clean_subset", "clean", 1),
            ("gap", "gap", 1),
            ("n_overlap", "n", 0),
        ):
            values = mine[mine["metric"] == metric].set_index("label")["mean"]
            cells[f"{name} {title}"] = {m: cell(values.get(m), digits) for m in models}
    return pd.DataFrame(cells, index=pd.Index(models, name="model"))


def render(table: pd.DataFrame, block: dict) -> tuple[str, str, list[str]]:
    return render_frames("overlap", CAPTION, overlap_table(records.aggregate(table)), block)
