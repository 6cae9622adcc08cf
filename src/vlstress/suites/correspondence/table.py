"""The correspondence suite's table: rows = models with their image tower's kind; per set, the
recall (%) at each threshold over all pairs and at the binned threshold per rotation (SPair:
viewpoint) bin, with the pairs behind each (n). Cells are means over replicates. The recall at the
binned threshold, overall and per bin, shows the headline table's BCa bootstrap interval over the
pairs; the other thresholds have none (their records keep no per-pair outcomes of them)."""

from __future__ import annotations

import pandas as pd

from vlstress.report import records
from vlstress.report.frames import cell, count_cell, headline_cell, render_frame_set
from vlstress.report.headlines import Interval, case_key, intervals_by_case
from vlstress.suites.correspondence.figures import (
    COUNTS,
    correspondence_rows,
    threshold_order,
    threshold_tick,
)

CAPTION = (
    "Dense correspondence of frozen image towers (Probe3D's protocol): recall (%) of the matches "
    "(SPair: keypoints) within each error threshold over all pairs, then the recall at the binned "
    "threshold per rotation (SPair: viewpoint-variation) bin; n: pairs. [lo, hi]: 95% seeded BCa "
    "bootstrap interval over the pairs of the recall at the binned threshold (none under 10 pairs, "
    "as in most bins of a small set, for a mean over replicate seeds or where every resample "
    "gives the same value); the other thresholds have none"
)


def _recall_cells(
    rows: pd.DataFrame, models: list[str], intervals: dict[tuple[str, ...], Interval]
) -> dict[str, str]:
    """Model label -> its recall at the binned threshold with its interval (one bin's rows)."""
    found = {}
    for row in rows.itertuples(index=False):
        case = case_key(row.model, row.dataset, row.task, row.condition)
        found[row.label] = headline_cell(row.mean, intervals.get((*case, "recall")))
    return {m: found.get(m, cell(None)) for m in models}


def correspondence_table(
    table: pd.DataFrame, intervals: dict[tuple[str, ...], Interval] | None = None
) -> pd.DataFrame | None:
    """The table of the summary; `intervals`: the headline table's (`intervals_by_case`)."""
    raw = correspondence_rows(table)
    if raw.empty:
        return None
    intervals = intervals or {}
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
        recall = overall[overall["metric"] == "recall"]
        binned_at = threshold_tick(f"recall_{recall['threshold'].iloc[0]}") if len(recall) else None
        for metric in threshold_order(overall.loc[~overall["metric"].isin(COUNTS), "metric"]):
            column = values[metric] if metric in values else pd.Series(dtype="float64")
            tick = threshold_tick(metric)
            cells[f"{name}: {tick}"] = (
                # the recall at the binned threshold is the headline: its interval
                _recall_cells(recall, models, intervals)
                if tick == binned_at
                else {m: cell(column.get(m)) for m in models}
            )
        binned = mine[(mine["bin"] != "all") & (mine["metric"] == "recall")]
        for bin_name in dict.fromkeys(binned["bin"]):
            threshold = threshold_tick(f"recall_{binned['threshold'].iloc[0]}")
            cells[f"{name}: {threshold} @ {bin_name}"] = _recall_cells(
                binned[binned["bin"] == bin_name], models, intervals
            )
    return pd.DataFrame(cells, index=pd.Index(models, name="model"))


def render(
    table: pd.DataFrame, block: dict, headlines: pd.DataFrame | None = None
) -> tuple[str, str, list[str]]:
    frame = correspondence_table(
        table, intervals_by_case(headlines) if headlines is not None else None
    )
    return render_frame_set("correspondence", {"correspondence": (CAPTION, frame)}, block)
