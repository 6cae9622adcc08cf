"""How many queries each retrieval share counts, for its Wilson interval: image → text ranks the
captions of each image (the queries are the images, `n_images`), text → image ranks the images of
each caption (the queries are the captions, `n_captions`). R@K and false R@1 are shares of these
queries; a drop rate is a ratio of two R@1 of the same queries, not a share (no interval)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from vlstress.report.intervals import wilson_percent

QUERY_COLUMNS = {"i2t": "n_images", "t2i": "n_captions"}
QUERY_NOUNS = {"i2t": "images", "t2i": "captions"}
SHARES = ("R@", "false_R@1")  # metric names (after the direction) that are shares of queries


def direction(metric: str) -> str:
    return metric.partition("_")[0]


def is_share(metric: str) -> bool:
    return metric.partition("_")[2].startswith(SHARES)


def query_counts(rows: pd.DataFrame) -> pd.Series:
    """The number of queries behind each row's value (NaN where the records do not say, or the
    metric has no direction)."""
    found = pd.Series(np.nan, index=rows.index, dtype="float64")
    for short, column in QUERY_COLUMNS.items():
        mine = rows["metric"].astype(str).map(direction) == short
        if column in rows:
            found[mine] = pd.to_numeric(rows.loc[mine, column], errors="coerce").astype("float64")
    return found


def interval(value_pct: float, n: float) -> tuple[float, float]:
    """The 95% Wilson interval (percent) of one share of n queries (a mean over seeds: a
    fractional count); NaN, NaN without n."""
    lo, hi = wilson_percent([value_pct], [n])
    return float(lo[0]), float(hi[0])
