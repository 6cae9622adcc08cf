"""The 3D Common Corruptions table: rows = models; the image tower, the images (n), the clean top-1
error, each corruption's error (100 - top-1, the mean over its measured severities: ImageNet-C's
corruption error before any baseline's division) and their mean over corruptions. Cells are means
over replicates (a fractional count for an interval).

A cell that is one share of the n images (the clean error; a corruption measured at one severity)
gets its 95% Wilson interval `[lo, hi]` over them; a mean over severities or over corruptions is a
mean of shares of the same images, not a share of n, and gets none (the figure draws each
severity's Wilson band)."""

from __future__ import annotations

import json

import pandas as pd

from vlstress.report import records
from vlstress.report.frames import cell, count_cell, render_frame_set, share_cell
from vlstress.suites.corruptions_3d.towers import towers

TASK = "corruption_3d"  # paths.TASK, written out: a report step imports no suite path module
CAPTION = (
    "Top-1 error (%) under 3D common corruptions: per corruption the mean over its measured "
    "severities, and the mean over corruptions; clean: the error on the clean test set; n: the "
    "images (each corruption a copy of them); [lo, hi]: 95% Wilson interval over the n images, "
    "given where the value is one share of them (clean, a corruption measured at one severity); "
    "a mean over several severities and the mean column have none (a mean of shares of the same "
    "images is not a share of n)"
)


def images(table: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """The images of each model's test set from the long summary (the aggregated table no longer
    has `n_images`): label -> n (the most over its records), and (label, corruption) -> n."""
    rows = records.rows(table, TASK)
    n = pd.to_numeric(rows["n_images"], errors="coerce")
    corruption = rows["condition_json"].map(lambda c: json.loads(c).get("corruption"))
    found = rows.assign(n=n, corruption=corruption)
    return (
        found.groupby("label", sort=False)["n"].max(),
        found.groupby(["label", "corruption"], sort=False)["n"].max(),
    )


def error_table(
    agg: pd.DataFrame,
    tower: dict[str, str],
    n_images: tuple[pd.Series, pd.Series] | None = None,
) -> tuple[pd.DataFrame | None, list[str]]:
    """The table and its notes (severities and depth) from the aggregated summary; `n_images` as
    `images` gives it (None: n unknown, no intervals)."""
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
    measured = top1.groupby(["label", "corruption"], sort=False)["severity"].nunique()
    corruptions = list(dict.fromkeys(top1["corruption"]))
    per_model, per_corruption = n_images or (pd.Series(dtype="float64"), pd.Series(dtype="float64"))

    def error(value: float, n: float | None, one_share: bool) -> str:
        return share_cell(100 - value, n) if one_share else cell(100 - value)

    cells: dict[str, dict[str, str]] = {
        "tower": {m: tower.get(m, "unknown") for m in models},
        "n": {m: count_cell(per_model.get(m)) for m in models},
        "clean": {
            m: error(clean[m], per_model.get(m), True) if m in clean else cell(None) for m in models
        },
    }
    for name in corruptions:
        cells[name.replace("_", " ")] = {
            m: error(
                per.loc[m, name], per_corruption.get((m, name)), measured.get((m, name), 0) == 1
            )
            for m in models
        }
    cells["mean"] = {m: cell(100 - per.loc[m, corruptions].mean()) for m in models}
    severities = sorted({int(s) for s in top1["severity"]})
    notes = [
        "each corruption: the mean error over severities " + ", ".join(map(str, severities)),
        "depth: " + "; ".join(sorted({str(d) for d in rows["depth"].dropna()}) or ["unstated"]),
    ]
    return pd.DataFrame(cells, index=pd.Index(models, name="model")), notes


def render(table: pd.DataFrame, block: dict) -> tuple[str, str, list[str]]:
    rows = records.rows(table, TASK)
    frame, notes = error_table(
        records.aggregate(table), towers(rows) if len(rows) else {}, images(table)
    )
    return render_frame_set("corruptions_3d", {"errors": (CAPTION, frame)}, block, notes)
