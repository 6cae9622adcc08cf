"""The robustness tables of one run in Markdown (`vlstress robustness --out-md`): the corruption
error per corruption (ImageNet-C's CE_c, mCE and relative mCE against the run's baseline model,
with mCA and the clean top-1) and the effective robustness of every (shift, model): the line it is
placed against (vlstress.suites.zeroshot.robustness_lines), the predicted top-1, ER in percentage
points with its 95% bootstrap interval against a published line, and the relative robustness; the
ER table also in LaTeX (`latex`, `--out-tex`). The numbers are the ones the command's CSVs hold
(`corruption_error.corruption_table`, `robustness_summary.effective`); only the per-corruption CE
is computed here, by the formula the mCE averages.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from vlstress.report.frames import MISSING, cell

CE_CAPTION = (
    "Corruption error (%, ImageNet-C protocol): CE of each corruption = the model's error summed "
    "over severities / the baseline {baseline}'s (100 = as the baseline; lower is better), mCE "
    "their mean, relative mCE the same on the drop from clean; mCA = mean top-1 over every "
    "(corruption, severity), clean = top-1 on the uncorrupted set; (AlexNet) columns: the same "
    "against AlexNet's published errors (15 corruptions × severities 1-5 of ImageNet val only); "
    f"{{n_corruptions}} corruption(s) × {{n_severities}} severities; {MISSING} undefined; "
    "[lo, hi]: 95% seeded BCa bootstrap interval of mCA, mCE and relative mCE over the test "
    "images, resampled together across every corrupted set, the clean set and the baseline (none "
    "where results/robustness/corruptions.csv's `interval` column says why; CE per corruption, "
    "relative drop and clean have none here)"
)
CE_CAPTION_NO_BASELINE = (
    "Corruption accuracy (%): mCA = mean top-1 over every (corruption, severity), clean = top-1 "
    "on the uncorrupted set, relative drop = (clean − mCA) / clean; (AlexNet) columns: mCE and "
    "relative mCE against AlexNet's published errors (15 corruptions × severities 1-5 of ImageNet "
    "val only); {n_corruptions} corruption(s) "
    f"× {{n_severities}} severities; no CE (no `zeroshot.robustness.mce_baseline`); {MISSING} "
    "undefined; [lo, hi]: 95% seeded BCa bootstrap interval of mCA over the test images"
)
ER_CAPTION = (
    "Effective robustness (ER, percentage points): a model's top-1 under each shift minus the "
    "top-1 the shift's line predicts from its in-distribution ({in_distribution}) top-1 "
    "({transform} axes); each row names its line: {lines}; RR = relative robustness "
    "(shifted - in-distribution top-1, pp); {MISSING} undefined"
)
PUBLISHED_LINE = (
    "'{name}: n ...' = the line of n published baselines (for testbed, imagenet-testbed's "
    "ImageNet-trained models, Taori et al. 2020), its 95% interval of ER from a percentile "
    "bootstrap over those models ({n_resamples} resamples); ImageNet-R and -A are scored on their "
    "200 classes and ObjectNet on its 113 classes, as the testbed's accuracies are"
)
RUN_LINE = (
    "'run's n models' = the line fitted over this run's n models (no published line for that "
    "shift: its kind, or the in-distribution set's, has no testbed column), with the same "
    "bootstrap interval over those models where there are at least 10 (none below)"
)


def _number(value: object) -> float | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return float(value)  # type: ignore[arg-type]


def ce_per_corruption(top1: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """Model -> CE (%) of each corruption against `baseline` (rows: models; columns:
    corruptions): Σ_s E(f, c, s) / Σ_s E(baseline, c, s) × 100, None where the baseline's error
    sum is 0. `top1`: columns model, corruption, severity, top1."""
    grid = top1.pivot_table(
        index=["corruption", "severity"], columns="model", values="top1", aggfunc="mean"
    )
    sums = (100.0 - grid).groupby(level="corruption").sum()
    out = sums.T.copy()
    denominator = sums[baseline]
    for corruption in sums.index:
        base = float(denominator.loc[corruption])
        out[corruption] = [
            None if base == 0 or math.isnan(base) else 100.0 * float(v) / base
            for v in sums.loc[corruption]
        ]
    out.index.name = "model"
    out.columns.name = None
    return out


def corruption_frame(
    corruptions: pd.DataFrame,
    top1: pd.DataFrame,
    baseline: str | None,
    labels: dict[str, str],
) -> pd.DataFrame:
    """Rows: models (as the corruption table orders them); columns: CE per corruption, mCE,
    relative mCE (with a baseline), mCA, relative drop, clean top-1."""
    ce = ce_per_corruption(top1, baseline) if baseline is not None else None
    rows = []
    for row in corruptions.itertuples(index=False):
        shown: dict[str, str] = {"model": labels.get(row.model, row.model)}
        if ce is not None:
            for corruption in ce.columns:
                shown[f"CE {corruption}"] = cell(_number(ce.loc[row.model, corruption]))
            shown["mCE"] = _with_interval(row, "mCE")
            shown["relative mCE"] = _with_interval(row, "relative_mCE")
        # the paper's normalisation, by AlexNet's published errors, where comparable
        comparable = not isinstance(getattr(row, "alexnet_note", None), str)
        for column, value in (
            ("mCE (AlexNet)", getattr(row, "mCE_alexnet", None)),
            ("relative mCE (AlexNet)", getattr(row, "relative_mCE_alexnet", None)),
        ):
            shown[column] = cell(_number(value)) if comparable else "not comparable"
        shown["mCA"] = _with_interval(row, "mCA")
        shown["relative drop"] = cell(_number(row.relative_drop))
        shown["clean"] = cell(_number(row.clean_top1))
        rows.append(shown)
    return pd.DataFrame(rows)


def _with_interval(row: Any, metric: str) -> str:
    """`128.9 [93.3, 185.0]`: the value and its bootstrap interval where the table has one
    (`<metric>_lo`, `_hi`: vlstress.suites.zeroshot.corruption_intervals)."""
    text = cell(_number(getattr(row, metric)))
    lo = _number(getattr(row, f"{metric}_lo", None))
    hi = _number(getattr(row, f"{metric}_hi", None))
    if text == MISSING or lo is None or hi is None:
        return text
    return f"{text} [{lo:.1f}, {hi:.1f}]"


def _pp(value: object, sign: bool = True) -> str:
    number = _number(value)
    if number is None:
        return MISSING
    return f"{number + 0.0:+.1f}" if sign else f"{number:.1f}"


def effective_frame(effective: pd.DataFrame, labels: dict[str, str]) -> pd.DataFrame:
    """One row per (shift, model), indexed by shift, line and model: in-distribution and shifted
    top-1, the line's prediction (%), ER with its 95% interval where the line has one, and RR
    (pp)."""
    rows = []
    for row in effective.itertuples(index=False):
        low = _number(getattr(row, "effective_robustness_low_pp", None))
        high = _number(getattr(row, "effective_robustness_high_pp", None))
        predicted = _number(row.predicted)
        er = _number(row.effective_robustness)
        rows.append(
            {
                "shift": row.shift,
                "line": getattr(row, "line", "run's models"),
                "model": labels.get(row.model, row.model),
                "ID top-1": _pp(100 * row.id_accuracy, sign=False),
                "shifted top-1": _pp(100 * row.shifted_accuracy, sign=False),
                "predicted": _pp(None if predicted is None else 100 * predicted, sign=False),
                "ER": _pp(None if er is None else 100 * er),
                "ER 95% interval": (
                    MISSING if low is None or high is None else f"[{low:+.1f}, {high:+.1f}]"
                ),
                "RR": _pp(100 * float(row.relative_robustness)),
            }
        )
    return pd.DataFrame(rows).set_index(["shift", "line", "model"])


def er_caption(
    effective: pd.DataFrame, in_distribution: str, transform: str, n_resamples: int
) -> str:
    """The ER table's caption: which lines its rows use."""
    sources = set(effective.get("line_source", pd.Series(["run"], dtype=str)))
    lines = []
    published = sorted(sources - {"run", "none"})
    if published:
        lines.append(
            PUBLISHED_LINE.format(name="/".join(published), n_resamples=n_resamples or "no")
        )
    if "run" in sources or not published:
        lines.append(RUN_LINE)
    return ER_CAPTION.format(
        in_distribution=in_distribution,
        transform=transform,
        lines="; ".join(lines),
        MISSING=MISSING,
    )


def latex(
    effective: pd.DataFrame,
    in_distribution: str,
    labels: dict[str, str],
    transform: str = "logit",
    n_resamples: int = 0,
) -> str:
    """The effective-robustness table in LaTeX (`\\begin{table*}`), or a comment that there is
    none."""
    from vlstress.report.frames import to_latex

    if effective.empty:
        return "% no shifted accuracies: no effective-robustness table\n"
    caption = er_caption(effective, in_distribution, transform, n_resamples)
    frame = effective_frame(effective, labels)
    return to_latex({"effective": (caption, frame)}, "tab:robustness", "no shifted accuracies")


def markdown(
    corruptions: pd.DataFrame,
    top1: pd.DataFrame,
    baseline: str | None,
    effective: pd.DataFrame,
    in_distribution: str,
    note: str | None,
    labels: dict[str, str],
    transform: str = "logit",
    n_resamples: int = 0,
) -> str:
    """Both tables with their captions and notes (without the provenance block); `transform` and
    `n_resamples` (of the bootstrap) are named in the ER caption."""
    parts = []
    if corruptions.empty:
        parts.append("_Note: no corruption records: no corruption-error table._")
    else:
        counts = {
            "n_corruptions": int(corruptions["n_corruptions"].max()),
            "n_severities": int(corruptions["n_severities"].max()),
        }
        caption = (
            CE_CAPTION.format(baseline=labels.get(baseline, baseline), **counts)
            if baseline is not None
            else CE_CAPTION_NO_BASELINE.format(**counts)
        )
        frame = corruption_frame(corruptions, top1, baseline, labels)
        parts.append(f"### {caption}\n\n{frame.to_markdown(index=False, disable_numparse=True)}")
        notes = corruptions.get("alexnet_note", pd.Series(dtype=object))
        for text in dict.fromkeys(n for n in notes if isinstance(n, str) and n):
            parts.append(f"_Note: mCE and relative mCE against AlexNet's published errors {text}._")
        for text in dict.fromkeys(n for n in corruptions["mCE_note"] if isinstance(n, str) and n):
            parts.append(f"_Note: {text}._")
    if effective.empty:
        parts.append("_Note: no shifted accuracies: no effective-robustness table._")
    else:
        caption = er_caption(effective, in_distribution, transform, n_resamples)
        frame = effective_frame(effective, labels).reset_index()
        parts.append(f"### {caption}\n\n{frame.to_markdown(index=False, disable_numparse=True)}")
    if note:
        parts.append(f"_Note: {note}._")
    return "\n\n".join(parts)
