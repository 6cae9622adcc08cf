"""Metric records -> tidy tables: one row per (record, metric), and the mean/std over variant seeds.

A *condition* is an evaluation without its seed: `original`, `text-same_concept`,
`image-mix-lam0.9`. Records of one condition that differ only by `variant_seed`
are the seeds that `aggregate` averages (mean, sample std, n_seeds). The names
and orders shown in figures and tables come from the registries below, so a new
stress variant is one entry (unknown variants still work, sorted after known ones).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import VlstressError
from ..io import read_json

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Family:
    """A stress family: which retrieval direction it stresses and its variants (slug -> display name)."""

    direction: str  # metric prefix: "i2t" | "t2i"
    title: str
    variants: dict[str, str]


# stress -> family. "none" is the original gallery (both directions).
FAMILIES: dict[str, Family] = {
    "text": Family(
        "i2t",
        "text stress (image → text)",
        {"same_concept": "same-concept", "diff_concept": "diff-concept", "rand_voca": "rand-voca", "danger": "danger"},
    ),
    "image": Family("t2i", "image stress (text → image)", {"mix": "mix", "patch": "patch"}),
}
DIRECTIONS = {"i2t": "image → text", "t2i": "text → image"}
# metric order inside a direction (the rest follow, alphabetically)
METRIC_ORDER = ("R@1", "R@5", "R@10", "R@1_original", "false_R@1", "drop_rate")
STRESS_ORDER = {"none": 0, **{name: i + 1 for i, name in enumerate(FAMILIES)}}

# Per-record columns of the long table, in order (`summary.csv`).
RECORD_COLUMNS = [
    "model", "label", "arch", "weights", "weights_kind", "n_params", "dataset", "evaluation", "condition",
    "condition_label", "stress", "variant", "lam", "variant_seed", "n_images", "n_captions", "metric", "value",
]  # fmt: skip
# What identifies a condition of a model (everything but the seed).
GROUP_COLUMNS = [
    "model", "label", "arch", "weights", "weights_kind", "n_params", "dataset", "condition", "condition_label",
    "stress", "variant", "lam", "metric",
]  # fmt: skip
INTEGER_COLUMNS = ("n_params", "variant_seed", "n_images", "n_captions")
REQUIRED_KEYS = ("model", "weights", "dataset", "evaluation", "metrics", "provenance")


def condition_of(stress: str, variant: str, lam: float | None) -> str:
    if stress == "none":
        return "original"
    return f"{stress}-{variant}" if lam is None else f"{stress}-{variant}-lam{lam:g}"


def condition_label(stress: str, variant: str, lam: float | None) -> str:
    """Readable name: `original`, `same-concept`, `mix λ=0.9`."""
    if stress == "none":
        return "original"
    family = FAMILIES.get(stress)
    name = family.variants.get(variant, variant) if family else variant
    return name if lam is None else f"{name} λ={lam:g}"


def weights_short(model: dict[str, Any]) -> str:
    """`random-init` for seeded random weights (always visible), else the tag or checkpoint file name."""
    kind = model.get("weights") or ("random-init" if model.get("pretrained") is None else "hub")
    if kind == "random-init":
        return "random-init"
    if kind == "checkpoint":
        return Path(str(model.get("pretrained"))).name
    return str(model.get("pretrained"))


def _number(value: Any) -> float:
    return float("nan") if value is None else float(value)


def read_record(path: Path) -> list[dict[str, Any]]:
    """One metric record -> its rows (one per metric). Errors name the file."""
    record = read_json(path, "metric record")
    if not isinstance(record, dict):
        raise VlstressError(f"metric record {path}: expected a JSON object")
    missing = [key for key in REQUIRED_KEYS if key not in record]
    if missing:
        raise VlstressError(f"metric record {path}: missing key(s) {', '.join(missing)}")
    if not isinstance(record["metrics"], dict) or not record["metrics"]:
        raise VlstressError(f"metric record {path}: 'metrics' must be a non-empty object")
    stress = record.get("stress") or ("none" if record["evaluation"] == "original" else None)
    if stress is None:
        raise VlstressError(f"metric record {path}: no 'stress' field (none|text|image)")
    variant = record.get("variant") or ("original" if stress == "none" else record["evaluation"])
    lam = record.get("lam")
    lam = None if lam is None else float(lam)
    model = record["provenance"].get("model", {})
    base = {
        "model": record["model"],
        "label": f"{model.get('arch', record['model'])} ({weights_short(model)})",
        "arch": model.get("arch", ""),
        "weights": record["weights"],
        "weights_kind": model.get("weights", ""),
        "n_params": _number(model.get("n_params")),
        "dataset": record["dataset"],
        "evaluation": record["evaluation"],
        "condition": condition_of(stress, variant, lam),
        "condition_label": condition_label(stress, variant, lam),
        "stress": stress,
        "variant": variant,
        "lam": _number(lam),
        "variant_seed": _number(record.get("variant_seed")),
        "n_images": record.get("n_images"),
        "n_captions": record.get("n_captions"),
    }
    rows = []
    for metric, value in sorted(record["metrics"].items()):
        try:
            number = _number(value)
        except (TypeError, ValueError):
            raise VlstressError(f"metric record {path}: metric {metric!r} is not a number: {value!r}") from None
        rows.append({**base, "metric": metric, "value": number if math.isnan(number) else round(number, 4)})
    return rows


def collect(metrics_dir: Path) -> pd.DataFrame:
    """Every `<model>/<evaluation>.json` under `metrics_dir` as the long per-record table."""
    files = sorted(Path(metrics_dir).glob("*/*.json"))
    if not files:
        raise VlstressError(f"no metric records under {metrics_dir}; run `vlstress evaluate` first")
    rows = [row for path in files for row in read_record(path)]
    table = pd.DataFrame(rows, columns=RECORD_COLUMNS)
    for column in INTEGER_COLUMNS:  # `1`, not `1.0`, in the CSV; missing stays empty
        table[column] = table[column].astype("Float64").astype("Int64")
    _check(table)
    return order(table)


def _check(table: pd.DataFrame) -> None:
    seeds = table.drop_duplicates(["model", "evaluation"])
    dup = seeds[seeds.duplicated(["model", "condition", "variant_seed"], keep=False)]
    if not dup.empty:
        first = dup.iloc[0]
        raise VlstressError(
            f"metric records of model {first['model']!r} repeat condition {first['condition']!r} with the same "
            f"variant seed: {', '.join(sorted(dup['evaluation']))}"
        )
    labels = table.drop_duplicates("model").groupby("label")["model"].apply(list)
    for label, models in labels.items():  # two models with one arch+weights: tell them apart by slug
        if len(models) > 1:
            table.loc[table["model"].isin(models), "label"] = table["model"] + ": " + label
    datasets = sorted(table["dataset"].unique())
    if len(datasets) > 1:
        log.warning("metric records come from several datasets (%s); stale records under the metrics folder?", ", ".join(datasets))


def _stress_key(stress: pd.Series) -> pd.Series:
    return stress.map(lambda s: STRESS_ORDER.get(s, len(STRESS_ORDER)))


def _variant_key(frame: pd.DataFrame) -> pd.Series:
    def key(row) -> str:
        family = FAMILIES.get(row["stress"])
        names = list(family.variants) if family else []
        position = names.index(row["variant"]) if row["variant"] in names else len(names)
        return f"{position:03d}:{row['variant']}"

    return frame.apply(key, axis=1) if len(frame) else pd.Series(dtype=str)


def metric_key(metric: str) -> str:
    direction, _, name = metric.partition("_")
    position = METRIC_ORDER.index(name) if name in METRIC_ORDER else len(METRIC_ORDER)
    return f"{direction}:{position:02d}:{name}"


def order(table: pd.DataFrame) -> pd.DataFrame:
    """Deterministic order: models by size then label; original, text sets, image variants (registry order), lam, seed."""
    keyed = table.assign(
        _size=table["n_params"].astype("float64").fillna(float("inf")),
        _stress=_stress_key(table["stress"]),
        _variant=_variant_key(table),
        _lam=table["lam"].fillna(-1.0),
        _seed=table["variant_seed"].astype("float64").fillna(-1.0) if "variant_seed" in table else 0,
        _metric=table["metric"].map(metric_key),
    )
    keys = ["_size", "label", "model", "_stress", "_variant", "_lam", "_seed", "_metric"]
    keyed = keyed.sort_values(keys, kind="stable")
    return keyed.drop(columns=[c for c in keyed.columns if c.startswith("_")]).reset_index(drop=True)


def aggregate(table: pd.DataFrame) -> pd.DataFrame:
    """Mean, sample std (ddof=1; empty for one seed) and n_seeds of every (model, condition, metric)."""
    grouped = table.groupby(GROUP_COLUMNS, dropna=False, sort=False)
    agg = grouped["value"].agg(mean="mean", std="std").reset_index()
    agg["n_seeds"] = grouped.size().to_numpy()
    agg["seeds"] = grouped["variant_seed"].agg(
        lambda s: ",".join(str(int(v)) for v in sorted(s.dropna()))
    ).to_numpy()
    agg["mean"] = agg["mean"].round(4)
    agg["std"] = agg["std"].round(4)
    return order(agg)


def models(table: pd.DataFrame) -> list[str]:
    """Model labels in table order."""
    return list(dict.fromkeys(table["label"]))


def conditions(table: pd.DataFrame, stress: str) -> list[str]:
    """Condition labels of one stress family, in table order."""
    return list(dict.fromkeys(table.loc[table["stress"] == stress, "condition_label"]))


def read_summary(path: Path) -> pd.DataFrame:
    """The long table written by `vlstress summarize` (`summary.csv`)."""
    if not Path(path).is_file():
        raise VlstressError(f"summary table not found: {path}; run `vlstress summarize` first")
    table = pd.read_csv(path, keep_default_na=False, na_values=[""])
    missing = [c for c in RECORD_COLUMNS if c not in table.columns]
    if missing:
        raise VlstressError(f"summary table {path} lacks column(s) {', '.join(missing)}; re-run `vlstress summarize`")
    return table
