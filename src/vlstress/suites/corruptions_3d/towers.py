"""Each model's image tower as the figure and the table group models by: the summary's `tower`
column, which the records carry from the model card (vlstress.pool.attributes derived it from the
arch). Not derived again here: pool.attributes reaches the parameter counts, which import torch,
and a report step imports no model library."""

from __future__ import annotations

import pandas as pd

UNKNOWN = "unknown"


def towers(table: pd.DataFrame) -> dict[str, str]:
    """Model label -> its image tower (cnn, transformer, hybrid), `unknown` where the summary's
    `tower` cell is empty (a summary written before the column, or a model the rules cannot
    tell)."""
    found = {}
    for label, rows in table.groupby("label", sort=False):
        tower = rows["tower"].dropna().astype(str) if "tower" in rows else pd.Series(dtype=str)
        tower = tower[tower != ""]
        found[str(label)] = tower.iloc[0] if len(tower) else UNKNOWN
    return found
