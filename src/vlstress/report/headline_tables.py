"""The run's headline table with intervals and standing: CSV and Markdown (`vlstress headlines`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from vlstress.report import headlines
from vlstress.report.cells import count_text, interval_text, value_text
from vlstress.report.intervals import DEGENERATE, MIN_BOOTSTRAP_ITEMS, TOO_FEW_ITEMS


def with_percentiles(table: pd.DataFrame) -> pd.DataFrame:
    table = table.copy()
    table["percentile"] = headlines.percentiles(table) if not table.empty else []
    return table


def headlines_csv(table: pd.DataFrame) -> str:
    """Every headline row with its interval and percentile."""
    return with_percentiles(table).to_csv(index=False, lineterminator="\n")


def headlines_markdown(
    table: pd.DataFrame, confidence: float, provenance: dict | None = None
) -> str:
    """Per task, a row per model × set × condition × metric: `value [lo, hi]` and n; a model
    fine-tuned from a random-init one is labelled so. The provenance, given, as an HTML comment."""
    from vlstress.io import dumps_json
    from vlstress.report.figures import mark_random_init

    table = mark_random_init(table)
    level = f"{100 * confidence:g}%"
    parts = [
        "# Headline metrics",
        "",
        f"Values in percent (shape bias: a share of shape or texture decisions). Intervals "
        f"({level}): Wilson's score interval for proportions, over the items each record "
        "counted; a seeded BCa bootstrap over the record's per-item outcomes for ECE, AUROC, "
        "FPR@95 (in- and out-of-distribution images resampled each within itself), flip "
        "probability (over the sequences) and the ImageNet-X error ratio (images resampled with "
        "their correctness and factor); none, and the table says why, under "
        f"{MIN_BOOTSTRAP_ITEMS} items or for a degenerate bootstrap (every resample the same "
        "value).",
    ]
    for _, group in table.groupby("task", sort=False):
        cells = pd.DataFrame(
            {
                "model": group["label"],
                "set": group["dataset"],
                "condition": group["condition_label"],
                "metric": group["metric_label"],
                f"value [{level} interval]": [
                    f"{value_text(v)} {interval_text(lo, hi)}"
                    if np.isfinite(lo)
                    else f"{value_text(v)} (no interval: {why})"
                    if why in (TOO_FEW_ITEMS, DEGENERATE)
                    else value_text(v)
                    for v, lo, hi, why in zip(
                        group["value"], group["lo"], group["hi"], group["interval"]
                    )
                ],
                "n": [count_text(n) if pd.notna(n) else "?" for n in group["n"]],
            }
        )
        parts += ["", f"## {group['task_title'].iloc[0]}", "", cells.to_markdown(index=False)]
    if table.empty:
        parts += ["", "No headline metrics in this run."]
    if provenance is not None:
        parts += ["", f"<!-- provenance\n{dumps_json(provenance)}-->"]
    return "\n".join(parts) + "\n"
