"""The correspondence suite's table: rows = models with their image tower's kind; per set, the
recall (%) at each threshold over all pairs and at the binned threshold per rotation (SPair:
viewpoint) bin, with the pairs behind each (n). Cells are means over replicates."""

from __future__ import annotations

import pandas as pd

from vlstress.report import records
from vlstress.report.frames import cell, count_cell, render_frame_set
from vlstress.suites.correspondence.figures import (
    COUNTS,
    correspondence_rows,
    threshold_order,
    threshold_tick,
)

CAPTION = (
    "Dense correspondence of frozen image towers (Probe3D's protocol): recall (%) of the matches "
    "(SPair: keypoints) within each error threshold over all pairs, then the recall at the binned "
    "threshold per rotation (SPair: viewpoint-variation) bin; n: pairs; 95% BCa intervals over "
    "the pairs are in the findings' headline table"
)


def correspondence_table(table: pd.DataFrame) -> pd.DataFrame | None:
    raw = correspondence_rows(table)
    if raw.empty:
        return None
    towers = raw.drop_duplicates("label").set_index("label")["tower_kind"]  # not aggregated
    rows = correspondence_rows(records.aggregate(raw))
    models = records.models(rows)
    cells: dict[str, dict[str, str]] = {"tower": {m: str(towers.get(m, "")) for m in models}}
    for name in dict.fromkeys(rows["set"]):
        mine = rows[rows["set"] == name]
        overall = mine[mine["bin"] == "all"]
        values = overall.pivot_table(
            index="label", columns="metric", values="mean", aggfunc="first"
        )
        if "n_pairs" in values:
            cells[f"{name}: n"] = {m: count_cell(values["n_pairs"].get(m)) for m in models}
        for metric in threshold_order(overall.loc[~overall["metric"].isin(COUNTS), "metric"]):
            column = values[metric] if metric in values else pd.Series(dtype="float64")
            cells[f"{name}: {threshold_tick(metric)}"] = {m: cell(column.get(m)) for m in models}
        binned = mine[(mine["bin"] != "all") & (mine["metric"] == "recall")]
        for bin_name in dict.fromkeys(binned["bin"]):
            column = binned[binned["bin"] == bin_name].set_index("label")["mean"]
            threshold = threshold_tick(f"recall_{binned['threshold'].iloc[0]}")
            cells[f"{name}: {threshold} @ {bin_name}"] = {m: cell(column.get(m)) for m in models}
    return pd.DataFrame(cells, index=pd.Index(models, name="model"))


def render(table: pd.DataFrame, block: dict) -> tuple[str, str, list[str]]:
    frame = correspondence_table(table)
    return render_frame_set("correspondence", {"correspondence": (CAPTION, frame)}, block)
