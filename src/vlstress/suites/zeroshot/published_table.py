"""The published check as a table (`vlstress tables`, `results/tables/published.md` and `.tex`):
one row per (model, test set) of the `published-check` records in the summary, with the images the
run scored (n), the run's top-1 with its 95% Wilson interval over them, the published top-1, their
difference in points, the tolerance and the verdict, and the reason wherever there is no clean
comparison (vlstress.suites.zeroshot.published). Where the run saw part of the set and its interval
holds the published number, the note says so: the sample's noise can explain the difference. On
the whole set the published number was measured on the same images, so the interval (the set's
own sampling noise) cannot explain a difference and the note stays silent.
"""

from __future__ import annotations

import json
import math

import pandas as pd

from vlstress.report import records
from vlstress.report.frames import MISSING, cell, count_cell, render_frame_set, share_cell
from vlstress.report.intervals import wilson_percent
from vlstress.suites.zeroshot.published import (
    CLEAN,
    DIFFERS,
    NO_NUMBER,
    NOT_COMPARABLE,
    REASONS,
    TASK,
)

FLAG = "⚠ off"
WITHIN = "published number within the run's 95% interval"
CAPTION = (
    "Clean top-1 (%) of each model on each test set beside the published number (open_clip's "
    "zero-shot results; imagenet-testbed's for timm models) and the difference in points; "
    "n: the images the run scored; run top-1 [lo, hi]: 95% Wilson interval over the n images "
    "(where the run saw part of the set and the interval holds the published number, the note "
    f"says '{WITHIN}': the sample's noise can explain the difference; on the whole set the "
    "published number is of the same images, and the interval does not excuse a difference); "
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


def within_interval(run_top1: float | None, published_top1: float | None, n_images: object) -> bool:
    """Whether the published top-1 lies inside the 95% Wilson interval of the run's top-1 over
    its n images (all in percent); False where either number or n is unknown."""
    if run_top1 is None or published_top1 is None or n_images is None or pd.isna(n_images):
        return False
    lo, hi = wilson_percent([run_top1], [float(n_images)])  # type: ignore[arg-type]
    return bool(lo[0] <= published_top1 <= hi[0])


def note(why: str | None, n_images: object, within: bool = False) -> str:
    """The reasons of a check in words (`why`: codes joined by "+"); a subset says its size, and
    whether its interval holds the published number (`within`)."""
    words = []
    for code in (why or "").split("+"):
        if not code:
            continue
        text = REASONS.get(code, code)
        if code == "subset" and n_images is not None and not pd.isna(n_images):
            text += f" ({int(n_images):,} images)"  # type: ignore[call-overload]
        words.append(text)
    if within and "subset" in (why or "").split("+"):
        words.append(f"{WITHIN}: the sample's noise can explain the difference")
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
        run, reference = values.get("run_top1"), values.get("published_top1")
        # only where there is a verdict to qualify (a check not comparable has none)
        within = c.get("status") in (CLEAN, DIFFERS) and within_interval(run, reference, n_images)
        out.append(
            {
                "model": label,
                "set": dataset,
                "n": count_cell(n_images),
                "published as": c.get("reference") or MISSING,
                "run top-1": share_cell(run, n_images, 2),
                "published top-1": cell(reference, 2),
                "diff (pp)": MISSING if diff is None else f"{diff:+.2f}",
                "tolerance (pp)": cell(tolerance, 2),
                "verdict": verdict(str(c.get("status")), values.get("flagged")),
                "note": note(c.get("why"), n_images, within),
            }
        )
    return pd.DataFrame(out).set_index(["model", "set"])


def render(table: pd.DataFrame, block: dict) -> tuple[str, str, list[str]]:
    frame = published_table(table)
    notes = []
    if frame is not None:
        flagged = frame.index[frame["verdict"].str.startswith(FLAG)].tolist()
        if flagged:
            within = frame["note"].str.contains(WITHIN, regex=False)
            noise = frame.index[frame["verdict"].str.startswith(FLAG) & within].tolist()
            notes.append(
                f"{len(flagged)} (model, set) pair(s) off the published number by more than the "
                "tolerance: "
                + ", ".join(f"{m} on {s}" for m, s in flagged)
                + (
                    f"; of them, {len(noise)} saw part of the set and hold the published number "
                    "within the run's 95% interval (sampling noise can explain it): "
                    + ", ".join(f"{m} on {s}" for m, s in noise)
                    if noise
                    else ""
                )
            )
        if (frame["published as"] == MISSING).all():
            notes.append(
                "nothing to check: no (model, set) of this run has a published number (random-init "
                "weights, local checkpoints, models outside open_clip's and imagenet-testbed's "
                "tables, or test sets of kinds the tables do not hold)"
            )
    return render_frame_set("published", {"published": (CAPTION, frame)}, block, notes)
