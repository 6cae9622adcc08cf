"""Corruption robustness summaries (Hendrycks & Dietterich 2019), in percent.

For model f, corruption c, severities s (error E = 100 − top-1):
- mean corruption accuracy (mCA): mean top-1 over every (c, s);
- relative drop: (clean top-1 − mCA) / clean top-1;
- CE_c = Σ_s E(f, c, s) / Σ_s E(base, c, s); mCE = mean over c of CE_c (× 100);
- relative CE_c = Σ_s (E(f, c, s) − E(f, clean)) / Σ_s (E(base, c, s) − E(base, clean)); relative
  mCE likewise.
The baseline model is a model of the same run named in params (`zeroshot.robustness.mce_baseline`).
A CE whose baseline denominator is 0 is undefined (None), never infinite.

Beside it, the paper's own normalisation: `mCE_alexnet` and `relative_mCE_alexnet` divide by
AlexNet's published errors (`alexnet_errors`: its top-1 error per corruption, averaged over the 5
severities, and its clean error; `vlstress/data/published/alexnet_imagenet_c.csv`, sources in
SOURCES.md there): CE_c = mean_s E(f, c, s) / E_AlexNet(c), relative CE_c = (mean_s E(f, c, s) −
E(f, clean)) / (E_AlexNet(c) − E_AlexNet(clean)), averaged over the 15 ImageNet-C corruptions. They
are numbers only when they are comparable with AlexNet's (`alexnet_comparability`): every record
corrupts ImageNet val (condition `images`: `imagenet`, generated from a test set of kind imagenet;
`imagenet-c` names the released files) and the 15 corruptions are there at severities 1-5; else they
are None and `alexnet_note` says "not comparable: <why>".

`mCE_note` flags an mCE that means nothing though it is a number: a baseline at 0% top-1 under a
corruption (error 100% whatever the corruption does: CE is then only the model's own error rate),
or a baseline that loses no accuracy under a corruption (no drop to be relative to). Random-init
baselines do both.
"""

from __future__ import annotations

import math

import pandas as pd

from vlstress.errors import VlstressError
from vlstress.testsets.imagenet_c import IMAGENET_C, SEVERITIES

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
    "mCE_alexnet",
    "relative_mCE_alexnet",
    "alexnet_note",
]

ALEXNET_FILE = "data/published/alexnet_imagenet_c.csv"
# condition key of a corruption record naming the kind of the corrupted images' source; the kinds
# whose corruptions compare with AlexNet's published errors (ImageNet val, generated or released)
IMAGES_KEY = "images"
COMPARABLE_IMAGES = ("imagenet", "imagenet-c")


def alexnet_errors() -> dict[str, float]:
    """AlexNet's published top-1 errors (fractions): `clean` and each of the 15 corruptions (mean
    over the 5 severities), from `vlstress/data/published/alexnet_imagenet_c.csv`."""
    import csv
    import io
    from importlib import resources

    text = resources.files("vlstress").joinpath(ALEXNET_FILE).read_text(encoding="utf-8")
    return {
        row["corruption"]: float(row["alexnet_error"]) for row in csv.DictReader(io.StringIO(text))
    }


def alexnet_comparability(top1: pd.DataFrame) -> str | None:
    """Why these corruption records' mCE is not comparable with AlexNet's published errors
    ("not comparable: ..."), None when it is. `top1`: columns corruption, severity and, when the
    records say it, `images` (the kind of the corrupted images' source)."""
    reasons = []
    kinds = (
        sorted({str(k) for k in top1[IMAGES_KEY] if isinstance(k, str)})
        if IMAGES_KEY in top1
        else []
    )
    unknown = IMAGES_KEY not in top1 or top1[IMAGES_KEY].map(lambda k: not isinstance(k, str)).any()
    if unknown:
        reasons.append("the records do not say which images were corrupted")
    other = [k for k in kinds if k not in COMPARABLE_IMAGES]
    if other:
        reasons.append(
            f"corruptions of a {', '.join(other)} set, not of ImageNet val (kind imagenet or "
            "the released imagenet-c)"
        )
    present = set(top1["corruption"])
    missing = [c for c in IMAGENET_C if c not in present]
    if missing:
        reasons.append(
            f"{len(IMAGENET_C) - len(missing)} of the 15 ImageNet-C corruptions (missing: "
            f"{', '.join(missing)})"
        )
    short = []
    for corruption in IMAGENET_C:
        found = {int(s) for s in top1.loc[top1["corruption"] == corruption, "severity"]}
        if corruption in present and found != set(SEVERITIES):
            short.append(f"{corruption} at {', '.join(str(s) for s in sorted(found))}")
    if short:
        reasons.append(f"AlexNet's errors average severities 1-5; measured: {'; '.join(short)}")
    return "not comparable: " + "; ".join(reasons) if reasons else None


def _mean(values: list[float | None]) -> float | None:
    """The mean, None when any value is undefined."""
    known = [v for v in values if v is not None]
    return None if len(known) < len(values) else sum(known) / len(known)


def alexnet_row(top1: pd.DataFrame, model: str, clean_top1: float | None) -> tuple:
    """(mCE, relative mCE) of `model` against AlexNet's published errors over the 15 corruptions
    (percent; relative mCE None without a clean top-1 or where AlexNet's drop is 0)."""
    published = alexnet_errors()
    rows = top1[(top1["model"] == model) & top1["corruption"].isin(IMAGENET_C)]
    error = (100.0 - rows.groupby("corruption")["top1"].mean()).to_dict()
    ces = [_ratio(error[c], 100.0 * published[c]) for c in IMAGENET_C]
    mce = _mean(ces)
    if clean_top1 is None:
        return mce, None
    clean_error = 100.0 - clean_top1
    rces = [
        _ratio(error[c] - clean_error, 100.0 * (published[c] - published["clean"]))
        for c in IMAGENET_C
    ]
    rmce = _mean(rces)
    return mce, rmce


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
    alexnet_note = alexnet_comparability(top1)
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
            "mCE_alexnet": None,
            "relative_mCE_alexnet": None,
            "alexnet_note": alexnet_note,
        }
        if alexnet_note is None:
            row["mCE_alexnet"], row["relative_mCE_alexnet"] = alexnet_row(top1, model, clean_top1)
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
