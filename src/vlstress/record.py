"""The metric record: one evaluation of one model on one dataset under one condition.

Every evaluation writes one record (JSON, schema `vlstress.record/1`, package data
`data/record.schema.json`) and the report layer reads nothing else. A step that
evaluates several conditions in one run (an attack at several eps, calibration of
several sets, several OOD scores) writes one file holding a JSON array of records:

    {"schema": "vlstress.record/1",
     "task": "image-stress",
     "model": {"slug": "rn50-rand", "arch": "RN50", "weights": "random-init (seed 0)"},
     "dataset": {"name": "demo", "n_images": 8, "n_captions": 40},
     "condition": {"perturbation": "mix", "lam": 0.9, "seed": 10},
     "metrics": {"t2i_R@1": 12.5, "t2i_drop_rate": null},
     "provenance": {...}}

`condition` is a free mapping of scalars; its key `REPLICATE_KEY` ("seed") is the
replicate axis: records that differ only in that key are replicates, averaged by the
summary. Metric values are numbers or null (undefined), never NaN or Infinity: the
file is strict JSON.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from vlstress.errors import VlstressError
from vlstress.io import _json_default, atomic_path, read_json

SCHEMA = "vlstress.record/1"
SCHEMA_FILE = "data/record.schema.json"
FIELDS = ("schema", "task", "model", "dataset", "condition", "metrics", "provenance")
# The condition key whose values are replicates of one condition (averaged by the summary).
REPLICATE_KEY = "seed"


@dataclass(frozen=True)
class Record:
    task: str  # "retrieval" | "text-stress" | "image-stress" | ...
    model: dict  # {"slug", "arch", "weights"}
    dataset: dict  # {"name", "n_images", "n_captions", ...}
    # {} | {"set": "same_concept"} | {"perturbation": "mix", "lam": 0.9, "seed": 10} | ...
    condition: dict
    metrics: dict  # name -> float | int | None
    provenance: dict

    @property
    def replicate(self) -> Any:
        """The replicate value (`condition["seed"]`), None when the condition has none."""
        return self.condition.get(REPLICATE_KEY)

    @property
    def base_condition(self) -> dict:
        """The condition without its replicate key: what replicates share."""
        return base_condition(self.condition)


@lru_cache(maxsize=1)
def schema() -> dict:
    """The JSON Schema (draft 2020-12) of a record."""
    return json.loads(resources.files("vlstress").joinpath(SCHEMA_FILE).read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def _validator():
    from jsonschema import Draft202012Validator

    return Draft202012Validator(schema())


def base_condition(condition: Mapping[str, Any]) -> dict:
    return {key: value for key, value in condition.items() if key != REPLICATE_KEY}


def _plain(value: Any) -> Any:
    """numpy scalars -> Python numbers (the rest as is)."""
    if hasattr(value, "item") and type(value).__module__ == "numpy":
        return value.item()
    return value


def to_dict(record: Record) -> dict:
    """The JSON object of a record (top-level fields in `FIELDS` order)."""
    return {
        "schema": SCHEMA,
        "task": record.task,
        "model": dict(record.model),
        "dataset": {key: _plain(value) for key, value in record.dataset.items()},
        "condition": {key: _plain(value) for key, value in record.condition.items()},
        "metrics": {key: _plain(value) for key, value in record.metrics.items()},
        "provenance": dict(record.provenance),
    }


def _where(error) -> str:
    path = ".".join(str(part) for part in error.absolute_path)
    return path or "top level"


def validate(data: Any, source: str) -> None:
    """Raise a VlstressError naming `source` and every problem of `data` as a record."""
    if not isinstance(data, dict):
        raise VlstressError(
            f"metric record {source}: expected a JSON object, got {type(data).__name__}"
        )
    if "schema" not in data and "evaluation" in data:
        raise VlstressError(
            f"metric record {source}: no 'schema' field, an old flat record "
            "(evaluation/stress/variant fields); "
            f"expected {SCHEMA!r}: re-run its evaluation step"
        )
    if "schema" in data and data["schema"] != SCHEMA:
        raise VlstressError(
            f"metric record {source}: schema {data['schema']!r}, expected {SCHEMA!r}; "
            "it was written by another vlstress version: re-run its evaluation step"
        )
    metrics = data.get("metrics")
    if isinstance(metrics, dict):
        for name, value in metrics.items():
            if isinstance(value, float) and not math.isfinite(value):
                raise VlstressError(
                    f"metric record {source}: metric {name!r} is {value!r}; write null for an "
                    "undefined metric"
                )
    errors = sorted(
        _validator().iter_errors(data), key=lambda e: (list(map(str, e.absolute_path)), e.message)
    )
    if errors:
        problems = "; ".join(f"{_where(e)}: {e.message}" for e in errors[:5])
        more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
        raise VlstressError(f"metric record {source}: {problems}{more}")


def from_dict(data: Any, source: str = "<record>") -> Record:
    """A validated Record from its JSON object; errors name `source`."""
    validate(data, source)
    return Record(**{field: data[field] for field in FIELDS if field != "schema"})


def dumps(record: Record, source: str = "<record>") -> str:
    """Strict JSON text of a validated record (sorted keys, no NaN/Infinity)."""
    data = to_dict(record)
    validate(data, source)
    try:
        return (
            json.dumps(
                data,
                indent=2,
                sort_keys=True,
                ensure_ascii=False,
                allow_nan=False,
                default=_json_default,
            )
            + "\n"
        )
    except ValueError as exc:  # NaN/Infinity outside the metrics (dataset, condition, provenance)
        raise VlstressError(f"metric record {source}: {exc}") from None
    except TypeError as exc:
        raise VlstressError(f"metric record {source}: {exc}") from None


def write_record(path: str | os.PathLike, record: Record) -> None:
    """Validate `record` and write it atomically as strict JSON; nothing is written on error."""
    text = dumps(record, str(path))
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def read_record(path: str | os.PathLike) -> Record:
    """Read and validate one record; any problem is a VlstressError naming the file."""
    data = read_json(path, "metric record", strict=True)
    if isinstance(data, list):
        raise VlstressError(f"metric record {path}: a file of {len(data)} records, expected one")
    return from_dict(data, str(path))


def write_records(path: str | os.PathLike, records: list[Record]) -> None:
    """Validate every record and write them atomically as one JSON array; nothing is written on
    error."""
    if not records:
        raise VlstressError(f"metric records {path}: nothing to write")
    texts = [dumps(record, f"{path}[{i}]").rstrip("\n") for i, record in enumerate(records)]
    with atomic_path(path) as tmp:
        tmp.write_text("[\n" + ",\n".join(texts) + "\n]\n", encoding="utf-8")


def read_records(path: str | os.PathLike) -> list[Record]:
    """The records of a file: one record object, or a JSON array of them (errors name the file and
    position)."""
    data = read_json(path, "metric record", strict=True)
    if not isinstance(data, list):
        return [from_dict(data, str(path))]
    if not data:
        raise VlstressError(f"metric records {path}: an empty array")
    return [from_dict(item, f"{path}[{i}]") for i, item in enumerate(data)]


def weights_short(model: dict[str, Any], fallback: str = "") -> str:
    """`random-init` for seeded random weights (always visible), else the tag, or a checkpoint's
    folder and file name (`sc_vc/model.safetensors`: fine-tuned checkpoints share a file name)."""
    if not model:
        return fallback
    kind = model.get("weights") or ("random-init" if model.get("pretrained") is None else "hub")
    if kind == "random-init":
        return "random-init"
    if kind == "folder":  # a LLaVA saved with save_pretrained
        return Path(str(model.get("pretrained"))).name
    if kind == "checkpoint":
        path = Path(str(model.get("pretrained")))
        return f"{path.parent.name}/{path.name}" if path.parent.name else path.name
    if str(model.get("arch", "")).startswith("hf-hub:"):  # an open_clip repository: its revision
        return str(model.get("pretrained") or "main")
    return str(model.get("pretrained"))


def record_model(model: dict[str, Any]) -> dict[str, str]:
    """A model block -> the record's `model` field {slug, arch, weights (the weights label)}."""
    try:
        return {"slug": model["slug"], "arch": model["arch"], "weights": model["weights_label"]}
    except KeyError as exc:
        raise VlstressError(
            f"model {model.get('slug', '?')!r}: the embeddings' sidecar lacks {exc}; re-run the "
            "embed step"
        ) from None


def assemble(
    task: str,
    *,
    dataset: dict[str, Any],
    condition: Mapping[str, Any],
    metrics: dict[str, Any],
    provenance: dict[str, Any],
) -> Record:
    """The one place a record is put together: its `model` field is always the provenance's
    model block (`models.describe`) in short, so the two can never disagree."""
    return Record(
        task=task,
        model=record_model(provenance["model"]),
        dataset=dataset,
        condition=dict(condition),
        metrics=metrics,
        provenance=provenance,
    )
