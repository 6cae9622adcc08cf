"""Corruption robustness summaries (Hendrycks & Dietterich 2019), in percent.

For model f, corruption c, severities s (error E = 100 − top-1):
- mean corruption accuracy (mCA): mean top-1 over every (c, s);
- relative drop: (clean top-1 − mCA) / clean top-1;
- CE_c = Σ_s E(f, c, s) / Σ_s E(base, c, s); mCE = mean over c of CE_c (× 100);
- relative CE_c = Σ_s (E(f, c, s) − E(f, clean)) / Σ_s (E(base, c, s) − E(base, clean)); relative
  mCE likewise.
The baseline model (ImageNet-C: AlexNet) is a model of the same run named in params.
A CE whose baseline denominator is 0 is undefined (None), never infinite.

`mCE_note` flags an mCE that means nothing though it is a number: a baseline at 0% top-1 under a
corruption (error 100% whatever the corruption does: CE is then only the model's own error rate),
or a baseline that loses no accuracy under a corruption (no drop to be relative to). Random-init
baselines do both.
"""

from __future__ import annotations

import math

import pandas as pd

from vlstress.errors import VlstressError

COLUMNS = [
    "model",
    "clean_top1",
    "mCA",
    "relative_drop",
    "mCE",
    "relative_mCE",
    "n_corruptions",
    "n_severities",
    "mCE_note",
]


def _ratio(numerator: float, denominator: float) -> float | None:
    return None if denominator == 0 or math.isnan(denominator) else 100.0 * numerator / denominator


def baseline_note(grid: pd.DataFrame, clean: dict[str, float], baseline: str | None) -> str | None:
    """Why the mCE against `baseline` means nothing (None when it does): `grid` is top-1 per
    (corruption, severity) x model."""
    if baseline is None:
        return None
    top1 = grid[baseline].groupby(level="corruption")
    notes = []
    blind = sorted(str(c) for c, worst in top1.max().items() if worst == 0)
    if blind:
        notes.append(
            f"baseline {baseline} has 0% top-1 under {', '.join(blind)}: its error is 100% "
            "whatever the corruption does, so CE there is only the model's own error rate"
        )
    if clean.get(baseline) is not None:
        flat = sorted(str(c) for c, mean in top1.mean().items() if mean >= clean[baseline])
        if flat:
            notes.append(
                f"baseline {baseline} loses no top-1 under {', '.join(flat)} (clean "
                f"{clean[baseline]:.4g}%): no drop for relative CE to compare with"
            )
    return "; ".join(notes) or None


def corruption_table(
    top1: pd.DataFrame, clean: dict[str, float], baseline: str | None
) -> pd.DataFrame:
    """`top1`: columns model, corruption, severity, top1 (one row each); `clean`: model -> clean
    top-1.

    Returns one row per model with the columns of `COLUMNS`; mCE columns are None without a
    baseline.
    """
    if top1.empty:
        return pd.DataFrame(columns=COLUMNS)
    if baseline is not None and baseline not in set(top1["model"]):
        raise VlstressError(
            f"mCE baseline model {baseline!r} has no corruption records (models: "
            f"{', '.join(sorted(set(top1['model'])))})"
        )
    grid = top1.pivot_table(
        index=["corruption", "severity"], columns="model", values="top1", aggfunc="mean"
    )
    if grid.isna().any().any():
        missing = grid.columns[grid.isna().any()].tolist()
        raise VlstressError(
            f"model(s) {', '.join(missing)} lack some (corruption, severity) records: mCE needs "
            "the same grid for every model"
        )
    error = 100.0 - grid
    note = baseline_note(grid, clean, baseline)
    rows = []
    for model in grid.columns:
        clean_top1 = clean.get(model)
        mca = float(grid[model].mean())
        row = {
            "model": model,
            "clean_top1": clean_top1,
            "mCA": mca,
            "relative_drop": None if not clean_top1 else 100.0 * (clean_top1 - mca) / clean_top1,
            "mCE": None,
            "relative_mCE": None,
            "n_corruptions": int(grid.index.get_level_values("corruption").nunique()),
            "n_severities": int(grid.index.get_level_values("severity").nunique()),
            "mCE_note": note,
        }
        if baseline is not None:
            per_corruption = error.groupby(level="corruption").sum()
            ces = [
                _ratio(per_corruption.loc[c, model], per_corruption.loc[c, baseline])
                for c in per_corruption.index
            ]
            known = [ce for ce in ces if ce is not None]
            row["mCE"] = None if len(known) < len(ces) else sum(known) / len(known)
            if clean_top1 is not None and clean.get(baseline) is not None:
                rel = error.copy()
                rel[model] = error[model] - (100.0 - clean_top1)
                rel[baseline] = error[baseline] - (100.0 - clean[baseline])
                sums = rel.groupby(level="corruption").sum()
                rces = [_ratio(sums.loc[c, model], sums.loc[c, baseline]) for c in sums.index]
                rknown = [r for r in rces if r is not None]
                row["relative_mCE"] = None if len(rknown) < len(rces) else sum(rknown) / len(rknown)
        rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)
