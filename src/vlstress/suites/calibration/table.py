"""The calibration suite's table: rows = (model, set); columns = top-1, ECE, NLL, Brier raw and
temperature-scaled, T. Cells are means over replicates; `–` where a value is undefined.
"""

from __future__ import annotations

import json

import pandas as pd

from vlstress.report import records
from vlstress.report.frames import cell as _cell
from vlstress.report.frames import render_frames
from vlstress.suites.calibration.bounds import at_bound

AT_BOUND = "†"
BOUND_NOTE = (
    f"{AT_BOUND} T on the search bound [0.01, 100]: the fit split has no interior NLL optimum "
    "(e.g. every fit image wrong); the (T) columns use the bound"
)

CAPTION = (
    "Calibration of the zero-shot softmax: ECE (%), NLL, Brier, raw and with the temperature T "
    "fitted on held-out ID images"
)
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


def calibration_table(agg: pd.DataFrame) -> pd.DataFrame | None:
    rows = records.rows(agg, "calibration")
    if rows.empty:
        return None
    out = []
    for (label, cond), group in rows.groupby(["label", "condition_json"], sort=False):
        c = json.loads(cond)
        name = str(c.get("set"))
        if "corruption" in c:
            name += f": {c['corruption']} s{c.get('severity')}"
        elif "attack" in c:
            name += f": {c['attack']}"
        elif c.get("split"):
            name += f" ({c['split']}, ID)"
        values = dict(zip(group["metric"], group["mean"]))
        temperature = values.get("temperature")
        flagged = temperature is not None and temperature > 0 and at_bound(temperature)
        out.append(
            {
                "model": label,
                "set": name,
                **{
                    title: _cell(
                        values.get(metric), 3 if metric.startswith(("nll", "brier", "temp")) else 1
                    )
                    for metric, title in CALIBRATION_COLUMNS.items()
                },
            }
        )
        if flagged:
            out[-1]["T"] += AT_BOUND
    return pd.DataFrame(out).set_index(["model", "set"])


def render(table: pd.DataFrame, block: dict) -> tuple[str, str, list[str]]:
    frame = calibration_table(records.aggregate(table))
    bounded = frame is not None and frame["T"].str.endswith(AT_BOUND).any()
    caption = f"{CAPTION}. {BOUND_NOTE}" if bounded else CAPTION
    return render_frames("calibration", caption, frame, block)
