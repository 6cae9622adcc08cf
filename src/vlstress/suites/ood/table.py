"""The OOD suite's table: rows = (model, score); columns = AUROC and FPR@95 of every OOD set, each
with the headline table's 95% BCa bootstrap interval (in- and out-of-distribution images resampled
each within itself), n, the in-distribution images, and n OOD, the OOD set's. Cells are means
over replicates; `–` where a value is undefined.
"""

from __future__ import annotations

import json

import pandas as pd

from vlstress.report import records
from vlstress.report.frames import count_cell, headline_cell, render_frames
from vlstress.report.headlines import Interval, case_key, intervals_by_case, items_by_case

CAPTION = (
    "OOD detection with the zero-shot classifier: AUROC and FPR at 95% TPR (%) per OOD set and "
    "score; n: in-distribution images, n OOD: the OOD set's images. [lo, hi]: 95% seeded BCa "
    "bootstrap interval, the in- and out-of-distribution images resampled each within itself "
    "(none under 10 images, for a mean over replicate seeds or where every resample gives the same "
    "value)"
)
METRICS = (("auroc", "AUROC"), ("fpr95", "FPR@95"))


def ood_table(
    agg: pd.DataFrame,
    n_images: dict[tuple[str, ...], float] | None = None,
    intervals: dict[tuple[str, ...], Interval] | None = None,
    n_ood: dict[tuple[str, ...], float] | None = None,
) -> pd.DataFrame | None:
    """The table of the aggregated summary; `n_images`, `n_ood`: case -> in-distribution and OOD
    images (`case_key`); `intervals`: the headline table's (`intervals_by_case`)."""
    rows = records.rows(agg, "ood")
    if rows.empty:
        return None
    n_images = n_images or {}
    n_ood = n_ood or {}
    intervals = intervals or {}
    cells: dict[tuple[str, str], dict[str, str]] = {}
    for (model, label, dataset, condition, cond), group in rows.groupby(
        ["model", "label", "dataset", "condition", "condition_json"], sort=False, dropna=False
    ):
        c = json.loads(cond)
        case = case_key(model, dataset, "ood", condition)
        values = dict(zip(group["metric"], group["mean"]))
        row = cells.setdefault((label, str(c["score"])), {})
        row[f"{c['ood']}: n"] = count_cell(n_images.get(case))
        row[f"{c['ood']}: n OOD"] = count_cell(n_ood.get(case))
        for metric, title in METRICS:
            row[f"{c['ood']} {title}"] = headline_cell(
                values.get(metric), intervals.get((*case, metric))
            )
    frame = pd.DataFrame.from_dict(cells, orient="index").fillna("–")
    frame.index = pd.MultiIndex.from_tuples(frame.index, names=["model", "score"])
    return frame


def render(
    table: pd.DataFrame, block: dict, headlines: pd.DataFrame | None = None
) -> tuple[str, str, list[str]]:
    n_images = items_by_case(table, "ood")
    frame = ood_table(
        records.aggregate(table),
        n_images,
        intervals_by_case(headlines) if headlines is not None else None,
        items_by_case(table, "ood", "n_ood_images") if "n_ood_images" in table else None,
    )
    return render_frames("ood", CAPTION, frame, block)
