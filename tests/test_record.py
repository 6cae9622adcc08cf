"""The metric record (`vlstress.record`): round trip, strict JSON, schema violations named
clearly."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from vlstress import record as rec_module
from vlstress.errors import VlstressError
from vlstress.record import (
    REPLICATE_KEY,
    SCHEMA,
    Record,
    from_dict,
    read_record,
    read_records,
    to_dict,
    write_record,
    write_records,
)

from report_fixtures import record


def reject_constant(name):
    raise ValueError(f"non-standard JSON constant {name}")


@pytest.fixture
def image_record() -> Record:
    return record(
        "rn50-openai",
        "image-stress",
        {"perturbation": "mix", "lam": 0.9, "seed": 10},
        {"t2i_R@1": 52.0, "t2i_drop_rate": None},
    )


def test_round_trip(tmp_path, image_record):
    path = tmp_path / "r.json"
    write_record(path, image_record)
    assert read_record(path) == image_record
    assert from_dict(to_dict(image_record)) == image_record
    data = json.loads(path.read_text(), parse_constant=reject_constant)  # strict JSON
    assert list(to_dict(image_record)) == [
        "schema",
        "task",
        "model",
        "dataset",
        "condition",
        "metrics",
        "provenance",
    ]
    assert sorted(data) == sorted(rec_module.FIELDS) and data["schema"] == SCHEMA
    assert data["metrics"]["t2i_drop_rate"] is None
    assert image_record.replicate == 10 and image_record.base_condition == {
        "perturbation": "mix",
        "lam": 0.9,
    }
    assert REPLICATE_KEY == "seed"


def test_written_bytes_are_deterministic(tmp_path, image_record):
    write_record(tmp_path / "a.json", image_record)
    shuffled = replace(image_record, condition={"seed": 10, "lam": 0.9, "perturbation": "mix"})
    write_record(tmp_path / "b.json", shuffled)
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


def test_numpy_numbers_are_plain_json(tmp_path, image_record):
    numpy = replace(
        image_record,
        metrics={"t2i_R@1": np.float64(52.5), "n": np.int64(3)},
        dataset={**image_record.dataset, "n_images": np.int64(14)},
    )
    write_record(tmp_path / "r.json", numpy)
    back = read_record(tmp_path / "r.json")
    assert back.metrics == {"t2i_R@1": 52.5, "n": 3} and back.dataset["n_images"] == 14


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_metric_is_rejected_and_named(tmp_path, image_record, bad):
    path = tmp_path / "r.json"
    with pytest.raises(VlstressError, match=r"metric 't2i_drop_rate' is"):
        write_record(path, replace(image_record, metrics={"t2i_R@1": 1.0, "t2i_drop_rate": bad}))
    assert not path.exists() and not list(tmp_path.iterdir())  # nothing written, no temp file left


def test_nan_literal_in_a_file_is_rejected(tmp_path, image_record):
    path = tmp_path / "r.json"
    data = to_dict(image_record)
    data["metrics"]["t2i_drop_rate"] = float("nan")
    path.write_text(json.dumps(data))  # Python's json writes the non-standard NaN literal
    with pytest.raises(VlstressError, match=r"r\.json.*(NaN|nan)"):
        read_record(path)


def write_raw(tmp_path, data) -> str:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    return path


def test_missing_field_is_named_with_the_file(tmp_path, image_record):
    data = to_dict(image_record)
    del data["condition"]
    with pytest.raises(VlstressError, match=r"r\.json.*'condition' is a required property"):
        read_record(write_raw(tmp_path, data))


def test_wrong_schema_version(tmp_path, image_record):
    data = {**to_dict(image_record), "schema": "vlstress.record/0"}
    with pytest.raises(
        VlstressError, match=r"r\.json: schema 'vlstress.record/0', expected 'vlstress.record/1'"
    ):
        read_record(write_raw(tmp_path, data))


def test_extra_top_level_field(tmp_path, image_record):
    data = {
        **to_dict(image_record),
        "stress": "image",
    }  # the old flat format's fields are not allowed
    with pytest.raises(
        VlstressError,
        match=r"r\.json.*Additional properties are not allowed \('stress' was unexpected\)",
    ):
        read_record(write_raw(tmp_path, data))


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("metrics", {"t2i_R@1": "52"}, r"metrics\.t2i_R@1: '52' is not of type"),
        ("metrics", {}, r"metrics: \{\} should be non-empty"),
        ("condition", {"lam": [0.9]}, r"condition\.lam: \[0\.9\] is not of type"),
        ("model", {"slug": "m", "arch": "RN50"}, r"model: 'weights' is a required property"),
        ("dataset", {"n_images": 3}, r"dataset: 'name' is a required property"),
        ("task", 3, r"task: 3 is not of type 'string'"),
    ],
)
def test_bad_types_are_named(tmp_path, image_record, field, value, message):
    data = {**to_dict(image_record), field: value}
    with pytest.raises(VlstressError, match=message):
        read_record(write_raw(tmp_path, data))
    with pytest.raises(VlstressError, match=message):
        write_record(tmp_path / "w.json", replace(image_record, **{field: value}))
    assert not (tmp_path / "w.json").exists()


def test_file_problems_are_named(tmp_path):
    with pytest.raises(VlstressError, match="metric record not found"):
        read_record(tmp_path / "nope.json")
    (tmp_path / "empty.json").write_text("")
    with pytest.raises(VlstressError, match=r"empty\.json"):
        read_record(tmp_path / "empty.json")
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(VlstressError, match=r"not valid JSON: .*broken\.json"):
        read_record(tmp_path / "broken.json")
    (tmp_path / "list.json").write_text("[]")
    with pytest.raises(VlstressError, match=r"list\.json: a file of 0 records, expected one"):
        read_record(tmp_path / "list.json")
    (tmp_path / "number.json").write_text("3")
    with pytest.raises(VlstressError, match=r"number\.json: expected a JSON object"):
        read_record(tmp_path / "number.json")


def test_schema_file_is_draft_2020_12():
    from jsonschema import Draft202012Validator

    schema = rec_module.schema()
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"].endswith("2020-12/schema") and schema["$id"] and schema["title"]
    assert (
        schema["additionalProperties"] is False
        and schema["properties"]["schema"]["const"] == SCHEMA
    )


def test_old_flat_record_says_to_rerun(tmp_path):
    old = {
        "model": "m",
        "weights": "hub:openai",
        "evaluation": "original",
        "stress": "none",
        "dataset": "demo",
        "metrics": {"i2t_R@1": 1.0},
    }
    with pytest.raises(
        VlstressError,
        match=r"r\.json: no 'schema' field, an old flat record.*re-run its evaluation step",
    ):
        read_record(write_raw(tmp_path, old))


def test_a_file_of_several_records(tmp_path, image_record):
    other = replace(image_record, condition={"perturbation": "patch", "lam": 0.5, "seed": 1})
    path = tmp_path / "many.json"
    write_records(path, [image_record, other])
    assert read_records(path) == [image_record, other]
    assert (
        json.loads(path.read_text(), parse_constant=reject_constant)[1]["condition"]["perturbation"]
        == "patch"
    )
    single = tmp_path / "one.json"
    write_record(single, image_record)
    assert read_records(single) == [image_record]
    with pytest.raises(VlstressError, match="a file of 2 records, expected one"):
        read_record(path)
    bad = replace(other, metrics={"x": float("nan")})
    with pytest.raises(VlstressError, match=r"many2.json\[1\].*'x' is nan"):
        write_records(tmp_path / "many2.json", [image_record, bad])
    assert not (tmp_path / "many2.json").exists()
    (tmp_path / "empty.json").write_text("[]")
    with pytest.raises(VlstressError, match="an empty array"):
        read_records(tmp_path / "empty.json")
