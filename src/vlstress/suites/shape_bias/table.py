"""The shape-bias suite's table: rows = models; columns = shape bias and the shares of shape,
texture and other decisions on the cue-conflict stimuli (all categories pooled), each with its 95%
Wilson interval `[lo, hi]` (shape bias over the shape + texture decisions, the shares over the
cue-conflict stimuli), with humans' shape bias in the caption. Cells are means over replicates
(a mean is a fractional count for the interval); `–` where a value is undefined.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from vlstress.report import records
from vlstress.report.frames import MISSING, render_frames, share_cell
from vlstress.suites.shape_bias.decisions import ALL, HUMAN_SHAPE_BIAS

CAPTION = (
    "Shape bias on the texture/shape cue-conflict stimuli: shape / (shape + texture) decisions "
    "(n: the shape + texture decisions), and each kind of decision as % of the cue-conflict "
    "stimuli (n: the stimuli); [lo, hi]: 95% Wilson interval over that n (humans: shape bias "
    f"{HUMAN_SHAPE_BIAS:.2f})"
)
SHARES = {  # metric -> (column, digits, how many of its unit make 100 %)
    "shape_bias": ("Shape bias", 3, 100.0),
    "shape_decisions": ("Shape (%)", 1, 1.0),
    "texture_decisions": ("Texture (%)", 1, 1.0),
    "other_decisions": ("Other (%)", 1, 1.0),
}
DECISIVE = ("shape_decisions", "texture_decisions")  # what shape bias is a share of


def count_text(n: float) -> str:
    return MISSING if not np.isfinite(n) else f"{n:.0f}" if float(n).is_integer() else f"{n:.1f}"


def decisive_count(values: pd.DataFrame) -> pd.Series:
    """The shape + texture decisions behind each shape bias: the cue-conflict stimuli times the
    share of them decided by shape or texture (rounded off float noise)."""
    shares = sum(values[m] for m in DECISIVE)
    return (values["n_conflict"] * shares / 100.0).round(6)


def shape_bias_table(agg: pd.DataFrame) -> pd.DataFrame | None:
    rows = records.rows(agg, "shape_bias")
    rows = rows[rows["condition_json"].map(lambda c: json.loads(c).get("category") == ALL)]
    if rows.empty:
        return None
    models = records.models(rows)
    values = rows.pivot_table(index="label", columns="metric", values="mean", dropna=False)
    values = values.reindex(index=models, columns=[*SHARES, "n_conflict"])
    decisive = decisive_count(values)
    cells: dict[str, dict[str, str]] = {}
    for metric, (title, digits, scale) in SHARES.items():
        n = decisive if metric == "shape_bias" else values["n_conflict"]
        cells[title] = {
            m: share_cell(float(values.at[m, metric]), float(n[m]), digits, scale) for m in models
        }
        if metric == "shape_bias":
            cells["n (shape + texture)"] = {m: count_text(float(decisive[m])) for m in models}
    cells["Stimuli"] = {m: count_text(float(values.at[m, "n_conflict"])) for m in models}
    return pd.DataFrame(cells, index=pd.Index(models, name="model"))


def render(table: pd.DataFrame, block: dict) -> tuple[str, str, list[str]]:
    return render_frames("shape_bias", CAPTION, shape_bias_table(records.aggregate(table)), block)
