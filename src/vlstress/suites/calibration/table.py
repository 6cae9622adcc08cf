"""The calibration suite's table: rows = (model, set); columns = top-1, ECE, NLL, Brier raw and
temperature-scaled, T. Cells are means over replicates; `–` where a value is undefined. A model's T
is marked † when it sits on the search bound and ‡ when it worsens the held-out ID NLL (from the
unrounded values of the summary), and the caption says what the marks mean.
"""

from __future__ import annotations

import json

import pandas as pd

from vlstress.report import records
from vlstress.report.frames import cell as _cell
from vlstress.report.frames import render_frames
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
    "fitted on a seeded split of the ID set and scored on its held-out rest and every other set"
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


def calibration_table(
    agg: pd.DataFrame, flags: dict[str, tuple[bool, bool]] | None = None
) -> pd.DataFrame | None:
    """The table of the aggregated summary; `flags`: model slug -> (T on the bound, T worsens the
    held-out ID NLL), by default from `agg`'s means (`bounds.fit_flags`)."""
    rows = records.rows(agg, "calibration")
    if rows.empty:
        return None
    flags = fit_flags(rows, "mean") if flags is None else flags
    out = []
    for (model, label, cond), group in rows.groupby(
        ["model", "label", "condition_json"], sort=False
    ):
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
        out[-1]["T"] += (AT_BOUND if bound else "") + (WORSE if worse else "")
    return pd.DataFrame(out).set_index(["model", "set"])


def render(table: pd.DataFrame, block: dict) -> tuple[str, str, list[str]]:
    # the flags from unrounded values: an NLL worse in the 5th decimal is still worse
    flags = fit_flags(records.rows(table, "calibration"))
    frame = calibration_table(records.aggregate(table), flags)
    caption = CAPTION
    if frame is not None and frame["T"].str.contains(AT_BOUND).any():
        caption += f". {BOUND_NOTE}"
    if frame is not None and frame["T"].str.contains(WORSE).any():
        caption += f". {WORSE_NOTE}"
    return render_frames("calibration", caption, frame, block)
