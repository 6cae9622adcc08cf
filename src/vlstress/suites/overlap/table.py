"""The overlap suite's table: rows = models; per test set, top-1 on the near-duplicates of training
images and on the clean rest, each with its 95% Wilson interval `[lo, hi]` over the images of the
subset (n), and the gap between them with Newcombe's interval for a difference of two independent
shares (the subsets are disjoint). Cells are means over replicates (a fractional count for the
intervals)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from statsmodels.stats.proportion import confint_proportions_2indep

from vlstress.report import records
from vlstress.report.frames import MISSING, count_cell, render_frames, share_cell

CAPTION = (
    "Zero-shot top-1 (%) on the test images with a near-duplicate in the training collection "
    "(overlap) and on the rest (clean), by the detector's flags; n: the images of each subset; "
    "[lo, hi]: 95% Wilson interval over them; gap: overlap minus clean in points, with "
    "Newcombe's 95% interval for a difference of two independent shares"
)


def number(value: float | None) -> float:
    return float("nan") if value is None or pd.isna(value) else float(value)


def gap_interval(
    overlap: float, n_overlap: float, clean: float, n_clean: float
) -> tuple[float, float]:
    """Newcombe's 95% interval (points) of overlap − clean, two shares in percent of disjoint
    image sets; NaN when a subset is empty."""
    if not all(np.isfinite([overlap, n_overlap, clean, n_clean])) or min(n_overlap, n_clean) <= 0:
        return float("nan"), float("nan")
    lo, hi = confint_proportions_2indep(
        overlap / 100.0 * n_overlap,
        n_overlap,
        clean / 100.0 * n_clean,
        n_clean,
        method="newcomb",
        compare="diff",
    )
    return 100.0 * float(lo), 100.0 * float(hi)


def gap_cell(overlap: float, n_overlap: float, clean: float, n_clean: float) -> str:
    gap = overlap - clean
    if not np.isfinite(gap):
        return MISSING
    lo, hi = gap_interval(overlap, n_overlap, clean, n_clean)
    return f"{gap:.1f}" if not np.isfinite(lo) else f"{gap:.1f} [{lo:.1f}, {hi:.1f}]"


def overlap_table(agg: pd.DataFrame) -> pd.DataFrame | None:
    rows = records.rows(agg, "overlap")
    if rows.empty:
        return None
    models = records.models(rows)
    cells: dict[str, dict[str, str]] = {}
    for cond in dict.fromkeys(rows["condition_json"]):
        name = json.loads(cond)["set"]
        mine = rows[rows["condition_json"] == cond]
        values = mine.pivot_table(index="label", columns="metric", values="mean", dropna=False)
        values = values.reindex(
            index=models,
            columns=["top1_overlap", "n_overlap", "top1_clean_subset", "n_clean_subset"],
        )
        found = {m: [number(v) for v in values.loc[m]] for m in models}
        cells[f"{name} overlap"] = {m: share_cell(v[0], v[1]) for m, v in found.items()}
        cells[f"{name} n overlap"] = {m: count_cell(v[1]) for m, v in found.items()}
        cells[f"{name} clean"] = {m: share_cell(v[2], v[3]) for m, v in found.items()}
        cells[f"{name} n clean"] = {m: count_cell(v[3]) for m, v in found.items()}
        cells[f"{name} gap"] = {m: gap_cell(*v) for m, v in found.items()}
    return pd.DataFrame(cells, index=pd.Index(models, name="model"))


def render(table: pd.DataFrame, block: dict) -> tuple[str, str, list[str]]:
    return render_frames("overlap", CAPTION, overlap_table(records.aggregate(table)), block)
