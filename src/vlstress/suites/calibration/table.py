"""The calibration suite's table: rows = (model, set); columns = n, top-1, ECE, NLL, Brier raw and
temperature-scaled, T. Cells are means over replicates; `–` where a value is undefined. Top-1 has
its Wilson interval over the n images, the ECEs the headline table's BCa bootstrap interval; NLL,
Brier and T have none (their records keep no per-image outcomes of them). A model's T is marked †
when it sits on the search bound and ‡ when it worsens the held-out ID NLL (from the unrounded
values of the summary), and the caption says what the marks mean.
"""

from __future__ import annotations

import json

import pandas as pd

from vlstress.report import records
from vlstress.report.frames import cell as _cell
from vlstress.report.frames import count_cell, headline_cell, render_frames, share_cell
from vlstress.report.headlines import Interval, case_key, intervals_by_case, items_by_case
from vlstress.suites.calibration.bounds import fit_flags

AT_BOUND = "†"
BOUND_NOTE = (
    f"{AT_BOUND} T on the search bound [0.01, 100]: the fit split has no interior NLL optimum "
    "(e.g. every fit image wrong); the (T) columns use the bound"
)
WORSE = "‡"
WORSE_NOTE = (
    f"{WORSE} T makes the held-out ID NLL worse than T = 1: the fit does not carry over even "
    "within the ID set"
)

CAPTION = (
    "Calibration of the zero-shot softmax: ECE (%), NLL, Brier, raw and with the temperature T "
    "fitted on a seeded split of the ID set and scored on its held-out rest and every other set; "
    "n: images scored. [lo, hi]: 95% interval, Wilson's over the n images for top-1, a seeded BCa "
    "bootstrap over them for the ECEs (none under 10 images, for a mean over replicate seeds or "
    "where every resample gives the same value); NLL, Brier and T have none"
)
INTERVAL_METRICS = ("ece", "ece_ts")
CALIBRATION_COLUMNS = {
    "top1": "Top-1",
    "ece": "ECE",
    "ece_ts": "ECE (T)",
    "nll": "NLL",
    "nll_ts": "NLL (T)",
    "brier": "Brier",
    "brier_ts": "Brier (T)",
    "temperature": "T",
}


def calibration_table(
    agg: pd.DataFrame,
    flags: dict[str, tuple[bool, bool]] | None = None,
    n_images: dict[tuple[str, ...], float] | None = None,
    intervals: dict[tuple[str, ...], Interval] | None = None,
) -> pd.DataFrame | None:
    """The table of the aggregated summary; `flags`: model slug -> (T on the bound, T worsens the
    held-out ID NLL), by default from `agg`'s means (`bounds.fit_flags`); `n_images`: case ->
    images scored (`case_key`); `intervals`: the headline table's (`intervals_by_case`)."""
    rows = records.rows(agg, "calibration")
    if rows.empty:
        return None
    flags = fit_flags(rows, "mean") if flags is None else flags
    n_images = n_images or {}
    intervals = intervals or {}
    out = []
    for (model, label, dataset, condition, cond), group in rows.groupby(
        ["model", "label", "dataset", "condition", "condition_json"], sort=False, dropna=False
    ):
        case = case_key(model, dataset, "calibration", condition)
        n = n_images.get(case)
        c = json.loads(cond)
        name = str(c.get("set"))
        if "corruption" in c:
            name += f": {c['corruption']} s{c.get('severity')}"
        elif "attack" in c:
            name += f": {c['attack']}"
        elif c.get("split"):
            name += f" ({c['split']}, ID)"
        values = dict(zip(group["metric"], group["mean"]))
        bound, worse = flags.get(model, (False, False))
        cells = {
            title: _cell(
                values.get(metric), 3 if metric.startswith(("nll", "brier", "temp")) else 1
            )
            for metric, title in CALIBRATION_COLUMNS.items()
        }
        cells["Top-1"] = share_cell(values.get("top1"), n)
        for metric in INTERVAL_METRICS:
            cells[CALIBRATION_COLUMNS[metric]] = headline_cell(
                values.get(metric), intervals.get((*case, metric))
            )
        out.append({"model": label, "set": name, "n": count_cell(n), **cells})
        out[-1]["T"] += (AT_BOUND if bound else "") + (WORSE if worse else "")
    return pd.DataFrame(out).set_index(["model", "set"])


def render(
    table: pd.DataFrame, block: dict, headlines: pd.DataFrame | None = None
) -> tuple[str, str, list[str]]:
    # the flags from unrounded values: an NLL worse in the 5th decimal is still worse
    flags = fit_flags(records.rows(table, "calibration"))
    n_images = items_by_case(table, "calibration")
    frame = calibration_table(
        records.aggregate(table),
        flags,
        n_images,
        intervals_by_case(headlines) if headlines is not None else None,
    )
    caption = CAPTION
    if frame is not None and frame["T"].str.contains(AT_BOUND).any():
        caption += f". {BOUND_NOTE}"
    if frame is not None and frame["T"].str.contains(WORSE).any():
        caption += f". {WORSE_NOTE}"
    return render_frames("calibration", caption, frame, block)
