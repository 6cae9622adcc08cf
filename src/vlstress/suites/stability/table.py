"""The stability suite's tables (ImageNet-P's layout): rows = models; flip probability (%) per
perturbation, its mean (mFP) and, against a baseline model, the mean flip rate (mFR, %); the same
for the top-5 distance (mT5D, and relative to the baseline in %). Beside them, mFR and relative mT5D
against AlexNet's published values (vlstress.suites.stability.published) where the run's sequences
compare with them, else the reason. Means and ratios are computed from
the unrounded values of the summary (cells round for display only); each caption names the number
of sequences per perturbation (n, also a column) and the baseline model. A flip probability shows
the headline table's BCa bootstrap interval over its sequences (none under 10 sequences); the
top-5 distance, the means and the ratios have none."""

from __future__ import annotations

import json

import pandas as pd

from vlstress.report import records
from vlstress.report.frames import MISSING, cell, headline_cell, render_frame_set
from vlstress.report.headlines import Interval, case_key, intervals_by_case
from vlstress.suites.stability import published
from vlstress.suites.stability.metrics import relative
from vlstress.suites.stability.perturbations import PERTURBATIONS

FP_CAPTION = "Flip probability (%) under perturbation sequences (ImageNet-P protocol)"
T5D_CAPTION = "Top-5 distance under perturbation sequences (ImageNet-P protocol)"
FP_INTERVALS = (
    "[lo, hi]: 95% seeded BCa bootstrap interval of a flip probability over its n sequences (none "
    "under 10 sequences, for a mean over replicate seeds or where every resample gives the same "
    "value); mFP and mFR have none"
)
NO_INTERVAL = "no interval: no per-sequence outcomes of the top-5 distance are kept"


def values(agg: pd.DataFrame, metric: str) -> dict[str, dict[str, float]]:
    """model slug -> perturbation -> mean value of `metric` (table order)."""
    rows = records.rows(agg, "stability", metric)
    out: dict[str, dict[str, float]] = {}
    for _, row in rows.iterrows():
        perturbation = json.loads(row["condition_json"])["perturbation"]
        out.setdefault(row["model"], {})[perturbation] = float(row["mean"])
    return out


def cases(agg: pd.DataFrame, metric: str) -> dict[tuple[str, str], tuple[str, ...]]:
    """(model slug, perturbation) -> its case (`case_key`), to find its interval."""
    rows = records.rows(agg, "stability", metric)
    return {
        (str(row.model), json.loads(row.condition_json)["perturbation"]): case_key(
            row.model, row.dataset, "stability", row.condition
        )
        for row in rows.itertuples(index=False)
    }


def conditions(agg: pd.DataFrame) -> list[dict]:
    """The conditions of the stability records."""
    return [json.loads(c) for c in records.rows(agg, "stability")["condition_json"]]


def alexnet(agg: pd.DataFrame) -> tuple[str | None, dict | None, int]:
    """(why the AlexNet columns hold no number, None when they do; AlexNet's published values;
    the run's difficulty)."""
    found = conditions(agg)
    values = published.alexnet_values()
    difficulties = sorted({int(c["difficulty"]) for c in found if "difficulty" in c})
    reason = published.comparability(
        [str(c.get("perturbation")) for c in found],
        [c.get(published.IMAGES_KEY) for c in found],
        difficulties,
        values,
    )
    if reason is None and len(difficulties) != 1:
        reason = "not comparable: the records mix difficulties " + ", ".join(map(str, difficulties))
    return reason, values, difficulties[0] if difficulties else 1


def _alexnet_cell(
    per: dict[str, float], metric: str, reason: str | None, values: dict | None, difficulty: int
) -> str:
    """The ratio (%) of a model's values to AlexNet's published ones, or why there is none."""
    if reason is not None or values is None:
        return published.cell_text(reason or published.NOT_SHIPPED)
    column = 0 if metric == "flip_probability" else 1
    return cell(published.alexnet_relative(per, difficulty, values, column))


def _alexnet_name(relative_name: str) -> str:
    """`mFR (%)` -> `mFR vs AlexNet (%)`."""
    return relative_name.replace(" (%)", "") + " vs AlexNet (%)"


def order(names) -> list[str]:
    """Perturbations in the registry's order (the paper's: noise, blur, weather, digital,
    geometry), unknown names last."""
    known = list(PERTURBATIONS)
    return sorted(dict.fromkeys(names), key=lambda n: (known.index(n) if n in known else 99, n))


def frame(
    agg: pd.DataFrame,
    metric: str,
    mean_name: str,
    relative_name: str,
    baseline: str | None,
    notes: list[str],
    against_alexnet: tuple[str | None, dict | None, int] | None = None,
    sizes: dict[str, str] | None = None,
    intervals: dict[tuple[str, ...], Interval] | None = None,
) -> pd.DataFrame | None:
    """Rows: models; given `sizes` (`sequences`), n first; FP (or T5D) per perturbation with its
    interval from `intervals` (`intervals_by_case` of the headline table), the mean, the ratio to
    `baseline` and, given `against_alexnet` (`alexnet`), the ratio to AlexNet's published values
    or why there is none."""
    found = values(agg, metric)
    if not found:
        return None
    intervals = intervals or {}
    case = cases(agg, metric)
    rows = records.rows(agg, "stability", metric)
    labels = dict(zip(rows["model"], rows["label"]))
    perturbations = order(p for per in found.values() for p in per)
    digits = 1 if metric == "flip_probability" else 3
    out = {}
    for model, per in found.items():
        row = {} if sizes is None else {"n": sizes.get(model, MISSING)}
        row.update(
            {
                p: headline_cell(
                    per.get(p), intervals.get((*case.get((model, p), ()), metric)), digits
                )
                for p in perturbations
            }
        )
        row[mean_name] = cell(sum(per.values()) / len(per), digits)
        if baseline is not None:
            ratio, zero = relative(per, found[baseline]) if baseline in found else (None, [])
            row[relative_name] = cell(None if ratio is None else 100.0 * ratio)
            if zero:
                note = (
                    f"{relative_name}: the baseline's {metric.replace('_', ' ')} is 0 under "
                    f"{', '.join(zero)}, left out of the mean"
                )
                notes.extend([note] if note not in notes else [])
        if against_alexnet is not None:
            row[_alexnet_name(relative_name)] = _alexnet_cell(per, metric, *against_alexnet)
        out[labels[model]] = row
    return pd.DataFrame.from_dict(out, orient="index").rename_axis("model")


def sequences(table: pd.DataFrame) -> dict[str, str]:
    """Model slug -> its sequences per perturbation (`3`, or `3/5` where perturbations differ),
    from the summary's `n_images` (the aggregated table no longer has it)."""
    rows = records.rows(table, "stability").dropna(subset=["n_images"])
    return {
        str(model): "/".join(str(n) for n in sorted({int(v) for v in group}))
        for model, group in rows.groupby("model", sort=False)["n_images"]
    }


def caption(
    text: str,
    table: pd.DataFrame,
    metric: str,
    relative_name: str,
    baseline: str | None,
    intervals: str = NO_INTERVAL,
) -> str:
    """`text` with the number of sequences per perturbation (n) and the baseline model of the
    relative column (`table`: the summary)."""
    rows = records.rows(table, "stability", metric)
    sizes = sorted({int(v) for v in rows["n_images"].dropna()})
    if sizes:
        text += f"; n = {'/'.join(map(str, sizes))} sequences per perturbation"
    labels = rows.loc[rows["model"] == baseline, "label"]
    if baseline is not None and len(labels):
        text += f"; {relative_name} against the baseline model {labels.iloc[0]}"
    return f"{text}; {intervals}"


def render(
    table: pd.DataFrame,
    block: dict,
    baseline: str | None,
    headlines: pd.DataFrame | None = None,
) -> tuple[str, str, list[str]]:
    # unrounded means: the ratios to the baseline must not be computed from rounded values
    agg = records.aggregate(table, digits=None)
    notes: list[str] = []
    if baseline is not None and baseline not in values(agg, "flip_probability"):
        notes.append(f"baseline {baseline!r} has no stability records: no relative values")
    against_alexnet = alexnet(agg)
    if against_alexnet[0] is not None and values(agg, "flip_probability"):
        notes.append(f"AlexNet columns (the paper's normalisation): {against_alexnet[0]}")
    sizes = sequences(table)
    intervals = intervals_by_case(headlines) if headlines is not None else None
    fp = frame(
        agg,
        "flip_probability",
        "mFP",
        "mFR (%)",
        baseline,
        notes,
        against_alexnet,
        sizes,
        intervals,
    )
    t5d = frame(
        agg, "top5_distance", "mT5D", "mT5D rel. (%)", baseline, notes, against_alexnet, sizes
    )
    frames = {
        "stability-fp": (
            caption(FP_CAPTION, table, "flip_probability", "mFR", baseline, FP_INTERVALS),
            fp,
        ),
        "stability-t5d": (
            caption(T5D_CAPTION, table, "top5_distance", "mT5D rel.", baseline),
            t5d,
        ),
    }
    return render_frame_set("stability", frames, block, notes)
