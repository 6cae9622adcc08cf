"""The stylized suite's table: rows = models; zero-shot top-1 on the clean test set, on its
AdaIN-stylized copy, the drop, and which networks stylized it."""

from __future__ import annotations

import json

import pandas as pd

from vlstress.report import records
from vlstress.report.frames import cell, render_frame_set

CAPTION = "Zero-shot top-1 (%) on a test set and on its AdaIN-stylized copy (Stylized-ImageNet)"


def stylized_table(agg: pd.DataFrame) -> tuple[pd.DataFrame | None, list[str]]:
    """The table, and a note per stylization (its alpha and networks)."""
    rows = records.rows(agg, "stylized")
    if rows.empty:
        return None, []
    models = records.models(rows)
    conditions = list(dict.fromkeys(rows["condition_json"]))
    cells: dict[str, dict[str, str]] = {}
    notes = []
    for number, cond in enumerate(conditions, start=1):
        c = json.loads(cond)
        mine = rows[rows["condition_json"] == cond]
        suffix = f" ({number})" if len(conditions) > 1 else ""
        notes.append(
            f"stylized{suffix}: AdaIN, alpha {c.get('alpha')}, networks {c.get('networks')}"
            + (" (random weights: not a real stylization)"
               if str(c.get("networks")).startswith("random-init") else "")
        )  # fmt: skip
        for metric, title in (("top1_clean", "clean"), ("top1", "stylized"), ("drop", "drop")):
            values = mine[mine["metric"] == metric].set_index("label")["mean"]
            cells[f"{title}{suffix}"] = {m: cell(values.get(m)) for m in models}
    return pd.DataFrame(cells, index=pd.Index(models, name="model")), notes


def render(table: pd.DataFrame, block: dict) -> tuple[str, str, list[str]]:
    frame, notes = stylized_table(records.aggregate(table))
    return render_frame_set("stylized", {"stylized": (CAPTION, frame)}, block, notes)
