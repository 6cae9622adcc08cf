"""The robustness tables of one run in Markdown (`vlstress robustness --out-md`): the corruption
error per corruption (ImageNet-C's CE_c, mCE and relative mCE against the run's baseline model,
with mCA and the clean top-1) and the effective robustness of every shift (percentage points,
relative robustness in brackets). The numbers are the ones the command's CSVs hold
(`corruption_error.corruption_table`, `robustness_summary.effective`); only the per-corruption CE
is computed here, by the formula the mCE averages.
"""

from __future__ import annotations

import math

import pandas as pd

from vlstress.report.frames import MISSING, cell

CE_CAPTION = (
    "Corruption error (%, ImageNet-C protocol): CE of each corruption = the model's error summed "
    "over severities / the baseline {baseline}'s (100 = as the baseline; lower is better), mCE "
    "their mean, relative mCE the same on the drop from clean; mCA = mean top-1 over every "
    "(corruption, severity), clean = top-1 on the uncorrupted set; {n_corruptions} corruption(s) "
    f"× {{n_severities}} severities; {MISSING} undefined"
)
CE_CAPTION_NO_BASELINE = (
    "Corruption accuracy (%): mCA = mean top-1 over every (corruption, severity), clean = top-1 "
    "on the uncorrupted set, relative drop = (clean − mCA) / clean; {n_corruptions} corruption(s) "
    f"× {{n_severities}} severities; no CE (no `zeroshot.robustness.mce_baseline`); {MISSING} "
    "undefined"
)
ER_CAPTION = (
    "Effective robustness (percentage points): a model's top-1 under each shift minus the top-1 "
    "the line fitted over this run's models predicts from its in-distribution ({in_distribution}) "
    "top-1; relative robustness (shifted − in-distribution top-1, pp) in brackets; {MISSING} "
    "undefined"
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
            shown["mCE"] = cell(_number(row.mCE))
            shown["relative mCE"] = cell(_number(row.relative_mCE))
        shown["mCA"] = cell(_number(row.mCA))
        shown["relative drop"] = cell(_number(row.relative_drop))
        shown["clean"] = cell(_number(row.clean_top1))
        rows.append(shown)
    return pd.DataFrame(rows)


def effective_frame(effective: pd.DataFrame, labels: dict[str, str]) -> pd.DataFrame:
    """Rows: models; a column per shift: `ER (RR)` in percentage points."""
    shifts = list(dict.fromkeys(effective["shift"]))
    models = list(dict.fromkeys(effective["model"]))
    cells: dict[str, dict[str, str]] = {s: {} for s in shifts}
    for row in effective.itertuples(index=False):
        er, rr = _number(row.effective_robustness), _number(row.relative_robustness)
        er_text = MISSING if er is None else f"{100 * er:+.1f}"
        rr_text = MISSING if rr is None else f"{100 * rr:+.1f}"
        cells[row.shift][row.model] = f"{er_text} ({rr_text})"
    frame = pd.DataFrame(
        {s: [cells[s].get(m, MISSING) for m in models] for s in shifts},
        index=pd.Index([labels.get(m, m) for m in models], name="model"),
    )
    return frame.reset_index()


def markdown(
    corruptions: pd.DataFrame,
    top1: pd.DataFrame,
    baseline: str | None,
    effective: pd.DataFrame,
    in_distribution: str,
    note: str | None,
    labels: dict[str, str],
) -> str:
    """Both tables with their captions and notes (without the provenance block)."""
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
        for text in dict.fromkeys(n for n in corruptions["mCE_note"] if isinstance(n, str) and n):
            parts.append(f"_Note: {text}._")
    if effective.empty:
        parts.append("_Note: no shifted accuracies: no effective-robustness table._")
    else:
        caption = ER_CAPTION.format(in_distribution=in_distribution, MISSING=MISSING)
        frame = effective_frame(effective, labels)
        parts.append(f"### {caption}\n\n{frame.to_markdown(index=False, disable_numparse=True)}")
    if note:
        parts.append(f"_Note: {note}._")
    return "\n\n".join(parts)
