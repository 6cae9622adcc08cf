"""The stylized suite's table: rows = models; zero-shot top-1 on the clean test set and on its
AdaIN-stylized copy, each with its 95% Wilson interval `[lo, hi]` over the n images (an `n`
column), the drop, and which networks stylized it. Cells are means over replicates (a fractional
count for the interval)."""

from __future__ import annotations

import json

import pandas as pd

from vlstress.report import records
from vlstress.report.frames import cell, count_cell, render_frame_set, share_cell

CAPTION = (
    "Zero-shot top-1 (%) on a test set and on its AdaIN-stylized copy (Stylized-ImageNet); "
    "n: the images (each stylized once); [lo, hi]: 95% Wilson interval over them; drop: clean "
    "minus stylized in points, without an interval (a paired difference of two records over "
    "the same images, which no step resamples together)"
)


def images(table: pd.DataFrame) -> pd.Series:
    """(model label, condition JSON) -> the images of its stylized test set (the summary's
    `n_images`, which the aggregated table no longer has)."""
    rows = records.rows(table, "stylized")
    return rows.groupby(["label", "condition_json"], sort=False)["n_images"].max().astype("float64")


def stylized_table(
    agg: pd.DataFrame, n_images: pd.Series | None = None
) -> tuple[pd.DataFrame | None, list[str]]:
    """The table, and a note per stylization (its alpha and networks); `n_images` as `images`
    gives it (None: n unknown, no intervals)."""
    rows = records.rows(agg, "stylized")
    if rows.empty:
        return None, []
    sizes = n_images if n_images is not None else pd.Series(dtype="float64")
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
        n = {m: sizes.get((m, cond)) for m in models}
        cells[f"n{suffix}"] = {m: count_cell(n[m]) for m in models}
        for metric, title in (("top1_clean", "clean"), ("top1", "stylized")):
            values = mine[mine["metric"] == metric].set_index("label")["mean"]
            cells[f"{title}{suffix}"] = {m: share_cell(values.get(m), n[m]) for m in models}
        drop = mine[mine["metric"] == "drop"].set_index("label")["mean"]
        cells[f"drop{suffix}"] = {m: cell(drop.get(m)) for m in models}
    return pd.DataFrame(cells, index=pd.Index(models, name="model")), notes


def render(table: pd.DataFrame, block: dict) -> tuple[str, str, list[str]]:
    frame, notes = stylized_table(records.aggregate(table), images(table))
    return render_frame_set("stylized", {"stylized": (CAPTION, frame)}, block, notes)
