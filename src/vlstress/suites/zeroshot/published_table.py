"""The published check as a table (`vlstress tables`, `results/tables/published.md` and `.tex`):
one row per (model, test set) of the `published-check` records in the summary, with the run's
top-1, the published top-1, their difference in points, the tolerance and the verdict, and the
reason wherever there is no clean comparison (vlstress.suites.zeroshot.published).
"""

from __future__ import annotations

import json
import math

import pandas as pd

from vlstress.report import records
from vlstress.report.frames import MISSING, cell, render_frame_set
from vlstress.suites.zeroshot.published import (
    CLEAN,
    DIFFERS,
    NO_NUMBER,
    NOT_COMPARABLE,
    REASONS,
    TASK,
)

FLAG = "⚠ off"
CAPTION = (
    "Clean top-1 (%) of each model on each test set beside the published number (open_clip's "
    "zero-shot results; imagenet-testbed's for timm models) and the difference in points; "
    f"{FLAG} where |difference| exceeds the tolerance (zeroshot.published.tolerance under the "
    "published protocol; zeroshot.published.protocol_tolerance where the classifier differs: "
    "other templates or class names, a timm model on ObjectNet; plus two standard errors of the "
    "sample where the run saw part of the set). "
    "'not comparable': the protocol differs (note says how), no verdict. 'no published number': "
    "random-init weights, a local checkpoint, a model in neither table, or a set of a kind the "
    f"tables do not hold; {MISSING} undefined"
)


def _number(value: object) -> float | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return float(value)  # type: ignore[arg-type]


def verdict(status: str, flagged: float | None) -> str:
    """The table's verdict of one check."""
    if status in (CLEAN, DIFFERS) and flagged is not None:
        off = FLAG if flagged else "ok"
        return off if status == CLEAN else f"{off} (protocol differs)"
    return status if status in (NOT_COMPARABLE, NO_NUMBER) else f"{status}?"


def note(why: str | None, n_images: object) -> str:
    """The reasons of a check in words (`why`: codes joined by "+"); a subset says its size."""
    words = []
    for code in (why or "").split("+"):
        if not code:
            continue
        text = REASONS.get(code, code)
        if code == "subset" and n_images is not None and not pd.isna(n_images):
            text += f" ({int(n_images):,} images)"  # type: ignore[call-overload]
        words.append(text)
    return "; ".join(words)


def published_table(table: pd.DataFrame) -> pd.DataFrame | None:
    """Rows (model, set) of the summary's `published-check` records; None without any."""
    found = records.rows(table, TASK)
    if found.empty:
        return None
    out = []
    for (label, dataset, cond, n_images), group in found.groupby(
        ["label", "dataset", "condition_json", "n_images"], sort=False, dropna=False
    ):
        c = json.loads(cond)
        values = {m: _number(v) for m, v in zip(group["metric"], group["value"])}
        diff = values.get("diff_pp")
        tolerance = values.get("tolerance_pp")
        out.append(
            {
                "model": label,
                "set": dataset,
                "published as": c.get("reference") or MISSING,
                "run top-1": cell(values.get("run_top1"), 2),
                "published top-1": cell(values.get("published_top1"), 2),
                "diff (pp)": MISSING if diff is None else f"{diff:+.2f}",
                "tolerance (pp)": cell(tolerance, 2),
                "verdict": verdict(str(c.get("status")), values.get("flagged")),
                "note": note(c.get("why"), n_images),
            }
        )
    return pd.DataFrame(out).set_index(["model", "set"])


def render(table: pd.DataFrame, block: dict) -> tuple[str, str, list[str]]:
    frame = published_table(table)
    notes = []
    if frame is not None:
        flagged = frame.index[frame["verdict"].str.startswith(FLAG)].tolist()
        if flagged:
            notes.append(
                f"{len(flagged)} (model, set) pair(s) off the published number by more than the "
                "tolerance: " + ", ".join(f"{m} on {s}" for m, s in flagged)
            )
        if (frame["published as"] == MISSING).all():
            notes.append(
                "nothing to check: no (model, set) of this run has a published number (random-init "
                "weights, local checkpoints, models outside open_clip's and imagenet-testbed's "
                "tables, or test sets of kinds the tables do not hold)"
            )
    return render_frame_set("published", {"published": (CAPTION, frame)}, block, notes)
