"""Metric records -> tidy tables: one row per (record, metric), and the mean/std over replicates.

Input is an explicit list of record files (`vlstress.record`, schema `vlstress.record/1`),
never a folder scan: a record of a model or condition that the params no longer
ask for cannot show up. Columns are generic: `task` (retrieval, text-stress,
image-stress, ...) and `condition` (the record's condition without its replicate
key, as canonical text; `condition_json` keeps it as JSON for figures that need
a value such as `lam`). Records of one (model, dataset, task, condition) that
differ only in `seed` are replicates that `aggregate` averages (mean, sample std,
n_seeds). Names and orders come from the task registry (`report.tasks`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from vlstress import record as record_format
from vlstress.errors import VlstressError
from vlstress.pool.fields import FIELDS
from vlstress.record import weights_short
from vlstress.report import tasks

log = logging.getLogger(__name__)

# metric order inside a direction (the rest follow, alphabetically)
METRIC_ORDER = ("R@1", "R@5", "R@10", "R@1_original", "false_R@1", "drop_rate")

# What the papers group models by: the model's `attributes` (vlstress.pool.attributes), one
# column each, empty where unknown.
ATTRIBUTE_COLUMNS = list(FIELDS)
# Per-record columns of the long table, in order (`summary.csv`).
RECORD_COLUMNS = [
    "model",
    "label",
    "arch",
    "weights",
    "weights_kind",
    "n_params",
    *ATTRIBUTE_COLUMNS,
    "dataset",
    "n_images",
    "n_captions",
    "n_classes",
    "n_ood_images",
    "task",
    "condition",
    "condition_label",
    "condition_json",
    "seed",
    "metric",
    "value",
]
# What identifies a condition of a model (everything but the replicate seed).
GROUP_COLUMNS = [
    "model",
    "label",
    "arch",
    "weights",
    "weights_kind",
    "n_params",
    "dataset",
    "task",
    "condition",
    "condition_label",
    "condition_json",
    "metric",
]
# Where one condition of one model is identified (for counting replicates).
CASE_COLUMNS = ["model", "dataset", "task", "condition"]
INTEGER_COLUMNS = (
    "n_params",
    "resolution",
    "n_images",
    "n_captions",
    "n_classes",
    "n_ood_images",
)
# columns added after summaries were first written: an older summary reads with them empty
OPTIONAL_COLUMNS = (*ATTRIBUTE_COLUMNS, "n_classes", "n_ood_images")
MISSING_HINT = (
    "it is written by an evaluation step (vlstress evaluate / evaluate-text / evaluate-image); "
    "run the workflow (`dvc repro` or `snakemake`) for the current params first"
)


def _number(value: Any) -> float:
    return float("nan") if value is None else float(value)


def record_rows(rec: record_format.Record) -> list[dict[str, Any]]:
    """One record -> its rows (one per metric, sorted by name)."""
    model = rec.provenance.get("model") or {}
    arch = rec.model.get("arch") or model.get("arch", "")
    base = {
        "model": rec.model["slug"],
        # a checkpoint is named by its model's slug: fine-tuned checkpoints share a file name
        # (model.safetensors), and the slug is what the user called the model
        "label": rec.model["slug"]
        if model.get("weights") == "checkpoint"
        else f"{arch} ({weights_short(model, rec.model['weights'])})",
        "arch": arch,
        "weights": rec.model["weights"],
        "weights_kind": model.get("weights", ""),
        "n_params": _number(model.get("n_params")),
        **attribute_cells(model.get("attributes")),
        "dataset": rec.dataset["name"],
        "n_images": _number(rec.dataset.get("n_images")),
        "n_captions": _number(rec.dataset.get("n_captions")),
        "n_classes": _number(rec.dataset.get("n_classes")),  # a classification set's (chance)
        "n_ood_images": _number(rec.dataset.get("n_ood_images")),  # an OOD record's other set
        "task": rec.task,
        "condition": tasks.condition_key(rec.condition),
        "condition_label": tasks.condition_label(rec.task, rec.condition),
        "condition_json": tasks.condition_json(rec.condition),
        "seed": rec.replicate,
    }
    return [
        {
            **base,
            "metric": metric,
            # unrounded: steps that compute from the summary (mCE, effective robustness) must not
            # compute from rounded numbers; tables and figures format for display
            "value": float("nan") if value is None else float(value),
        }
        for metric, value in sorted(rec.metrics.items())
    ]


def attribute_cells(found: Any) -> dict[str, Any]:
    """A record's model attributes as the summary's cells (None: an empty cell)."""
    found = found if isinstance(found, dict) else {}
    cells = {column: found.get(column) for column in ATTRIBUTE_COLUMNS}
    cells["resolution"] = _number(cells["resolution"])
    return cells


def read_records(paths: Iterable[Path]) -> list[tuple[Path, record_format.Record]]:
    """Read and validate every record; a missing file says which step writes it."""
    out: list[tuple[Path, record_format.Record]] = []
    for path in paths:
        path = Path(path)
        if not path.is_file():
            raise VlstressError(f"metric record not found: {path}; {MISSING_HINT}")
        out.extend((path, record) for record in record_format.read_records(path))
    return out


def collect(paths: Iterable[Path]) -> pd.DataFrame:
    """The long per-record table of exactly the record files `paths` (no folder scan)."""
    found = read_records(paths)
    if not found:
        raise VlstressError(
            "no metric records given; check the params (models and suites) or pass --record"
        )
    _check_replicates(found)
    rows = [row for _, rec in found for row in record_rows(rec)]
    table = pd.DataFrame(rows, columns=RECORD_COLUMNS)
    for column in INTEGER_COLUMNS:  # `1`, not `1.0`, in the CSV; missing stays empty
        table[column] = table[column].astype("Float64").astype("Int64")
    table["seed"] = _seed_column(table["seed"])
    _disambiguate(table)
    return order(table)


def _seed_column(seed: pd.Series) -> pd.Series:
    """Integer seeds as Int64 (empty where none); other replicate values kept as they are."""
    numeric = pd.to_numeric(seed, errors="coerce")
    if (numeric.notna() == seed.notna()).all() and (numeric.dropna() % 1 == 0).all():
        return numeric.astype("Float64").astype("Int64")
    return seed


def _check_replicates(found: list[tuple[Path, record_format.Record]]) -> None:
    seen: dict[tuple, Path] = {}
    for path, rec in found:
        key = (
            rec.model["slug"],
            rec.dataset["name"],
            rec.task,
            tasks.condition_key(rec.condition),
            json.dumps(rec.replicate),
        )
        if key in seen:
            raise VlstressError(
                f"metric records of model {key[0]!r} repeat task {rec.task!r}, condition "
                f"{key[3]!r} with the same {record_format.REPLICATE_KEY} ({rec.replicate}): "
                f"{seen[key]} and {path}"
            )
        seen[key] = path
    datasets = sorted({rec.dataset["name"] for _, rec in found})
    if len(datasets) > 1:
        log.warning("metric records come from several datasets (%s)", ", ".join(datasets))


def _disambiguate(table: pd.DataFrame) -> None:
    labels = table.drop_duplicates("model").groupby("label")["model"].apply(list)
    for (
        label,
        models,
    ) in labels.items():  # two models with one arch+weights: tell them apart by slug
        if len(models) > 1:
            table.loc[table["model"].isin(models), "label"] = table["model"] + ": " + label


def metric_key(metric: str) -> str:
    direction, _, name = metric.partition("_")
    position = METRIC_ORDER.index(name) if name in METRIC_ORDER else len(METRIC_ORDER)
    return f"{direction}:{position:02d}:{name}"


def _condition_rank(frame: pd.DataFrame) -> pd.Series:
    pairs = list(dict.fromkeys(zip(frame["task"], frame["condition_json"])))
    ranked = sorted(
        pairs,
        key=lambda p: (
            tasks.task_rank(p[0]),
            tasks.condition_sort_key(p[0], json.loads(p[1])),
            p[1],
        ),
    )
    rank = {pair: i for i, pair in enumerate(ranked)}
    return pd.Series(
        [rank[p] for p in zip(frame["task"], frame["condition_json"])],
        index=frame.index,
        dtype="int64",
    )


def _seed_rank(seed: pd.Series) -> tuple[pd.Series, pd.Series]:
    numeric = pd.to_numeric(seed.astype("object"), errors="coerce").astype("float64")
    return numeric.fillna(-1.0), seed.astype("object").where(numeric.isna(), "").fillna("").astype(
        str
    )


def order(table: pd.DataFrame) -> pd.DataFrame:
    """Deterministic order: models by size then label; tasks (registry order); conditions; seed;
    metric."""
    if table.empty:
        return table.reset_index(drop=True)
    keyed = table.assign(
        _size=table["n_params"].astype("float64").fillna(float("inf")),
        _condition=_condition_rank(table),
        _metric=table["metric"].map(metric_key),
    )
    keys = ["_size", "label", "model", "dataset", "_condition"]
    if "seed" in table:
        keyed["_seed"], keyed["_seed_text"] = _seed_rank(table["seed"])
        keys += ["_seed", "_seed_text"]
    keyed = keyed.sort_values([*keys, "_metric"], kind="stable")
    return keyed.drop(columns=[c for c in keyed.columns if c.startswith("_")]).reset_index(
        drop=True
    )


def _seed_list(seeds: pd.Series) -> str:
    values = [v for v in seeds if not pd.isna(v)]
    try:
        return ",".join(str(int(v)) for v in sorted(values))
    except (TypeError, ValueError):
        return ",".join(sorted(str(v) for v in values))


def aggregate(table: pd.DataFrame, digits: int | None = 4) -> pd.DataFrame:
    """Mean, sample std (ddof=1; empty for one seed) and n_seeds of every (model, task, condition,
    metric), rounded to `digits` decimals (None: unrounded, for what is computed from the means,
    e.g. ratios to a baseline)."""
    grouped = table.groupby(GROUP_COLUMNS, dropna=False, sort=False)
    agg = grouped["value"].agg(mean="mean", std="std").reset_index()
    agg["n_seeds"] = grouped.size().to_numpy()
    agg["seeds"] = grouped["seed"].agg(_seed_list).to_numpy()
    if digits is not None:
        agg["mean"] = agg["mean"].round(digits)
        agg["std"] = agg["std"].round(digits)
    return order(agg)


def models(table: pd.DataFrame) -> list[str]:
    """Model labels in table order."""
    return list(dict.fromkeys(table["label"]))


def conditions(table: pd.DataFrame, task: str) -> list[str]:
    """Condition labels of one task, in table order."""
    return list(dict.fromkeys(table.loc[table["task"] == task, "condition_label"]))


def rows(table: pd.DataFrame, task: str, metric: str | None = None) -> pd.DataFrame:
    """The rows of one task (and one metric)."""
    mask = table["task"] == task
    if metric is not None:
        mask &= table["metric"] == metric
    return table[mask]


def condition_values(table: pd.DataFrame, key: str) -> pd.Series:
    """One condition key as numbers (NaN where a record's condition lacks it or it is not a
    number)."""

    def value(text: str) -> float:
        item = json.loads(text).get(key)
        return (
            float(item)
            if isinstance(item, (int, float)) and not isinstance(item, bool)
            else float("nan")
        )

    return table["condition_json"].map(value).astype("float64")


def max_replicates(table: pd.DataFrame) -> int:
    """The largest number of rows of one (model, task, condition, metric): > 1 where there are
    seeds."""
    if table.empty:
        return 0
    return int(table.groupby([*CASE_COLUMNS, "metric"])["value"].size().max())


def read_summary(path: Path) -> pd.DataFrame:
    """The long table written by `vlstress summarize` (`summary.csv`)."""
    if not Path(path).is_file():
        raise VlstressError(f"summary table not found: {path}; run `vlstress summarize` first")
    table = pd.read_csv(
        path, keep_default_na=False, na_values=[""], dtype={"condition_json": str, "condition": str}
    )
    for column in OPTIONAL_COLUMNS:
        if column not in table.columns:
            table.insert(RECORD_COLUMNS.index(column), column, pd.NA)
    missing = [c for c in RECORD_COLUMNS if c not in table.columns]
    if missing:
        raise VlstressError(
            f"summary table {path} lacks column(s) {', '.join(missing)}; re-run "
            "`vlstress summarize`"
        )
    return table
