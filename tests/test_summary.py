"""`vlstress summarize`: per-seed rows, mean/std/n_seeds over replicate seeds, DVC metrics,
determinism, errors."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from vlstress.errors import VlstressError
from vlstress.report import records

from conftest import run_cli
from report_fixtures import (
    SEEDS,
    make_records,
    record,
    record_flags,
    t2i_value,
    write,
    write_records,
)

OUTPUTS = ("summary.csv", "summary_agg.csv", "summary.md", "scores", "plots/stress.csv")
MIX_09 = "perturbation=mix,lam=0.9"


def summarize(tmp_path, paths, out="out", check=True):
    out = tmp_path / out
    result = run_cli(
        "summarize",
        *record_flags(paths),
        "--out-csv",
        str(out / "summary.csv"),
        "--out-agg",
        str(out / "summary_agg.csv"),
        "--out-md",
        str(out / "summary.md"),
        "--out-scores",
        str(out / "scores"),
        "--out-plot",
        str(out / "plots" / "stress.csv"),
        check=check,
    )
    return out, result


def strict_json(path):
    def reject(name):
        raise ValueError(f"non-standard JSON constant {name} in {path}")

    return json.loads(path.read_text(), parse_constant=reject)


def scores(out):
    """The DVC metrics folder read back as model -> task -> condition -> metrics (every file
    strict JSON, flat numbers)."""
    nested: dict = {}
    for path in sorted((out / "scores").rglob("*.json")):
        task, _dataset, condition = path.relative_to(out / "scores").parent.parts
        numbers = strict_json(path)
        assert all(not isinstance(v, (dict, list, str)) for v in numbers.values()), path
        nested.setdefault(path.stem, {}).setdefault(task, {})[condition] = numbers
    return nested


@pytest.fixture(scope="module")
def full(module_tmp):
    root = module_tmp.mktemp("full")
    paths = write_records(root / "metrics")
    out, _ = summarize(root, paths)
    return root, paths, out


def test_columns_and_per_seed_rows_are_kept(full):
    _, _, out = full
    table = pd.read_csv(out / "summary.csv")
    assert list(table.columns) == records.RECORD_COLUMNS
    mix = table[
        (table["task"] == "image-stress")
        & (table["condition"] == MIX_09)
        & (table["metric"] == "t2i_R@1")
    ]
    assert sorted(mix["seed"]) == sorted(2 * list(SEEDS))  # two models x three seeds
    assert set(table["task"]) == {"retrieval", "text-stress", "image-stress"}
    assert set(mix["condition_label"]) == {"mix λ=0.9"}
    assert {json.loads(c)["lam"] for c in mix["condition_json"]} == {
        0.9
    }  # the condition, without its seed
    # a sidecar with provenance for every CSV
    meta = json.loads((out / "summary.csv.json").read_text())
    assert meta["provenance"]["step"] == "summarize" and meta["rows"] == len(table)
    assert (
        len(meta["provenance"]["params"]["records"])
        == len(meta["provenance"]["inputs"])
        == 2 * (1 + 4 + 2 * 2 * 3)
    )


def test_mean_std_n_seeds_known_answer(full):
    _, _, out = full
    agg = pd.read_csv(out / "summary_agg.csv")
    row = agg[
        (agg["model"] == "rn50-openai")
        & (agg["condition"] == "perturbation=patch,lam=0.7")
        & (agg["metric"] == "t2i_R@1")
    ]
    assert len(row) == 1
    row = row.iloc[0]
    values = [t2i_value("rn50-openai", "patch", 0.7, s) for s in SEEDS]
    assert row["mean"] == pytest.approx(sum(values) / 3, abs=1e-4)
    assert row["std"] == pytest.approx(pd.Series(values).std(ddof=1), abs=1e-4)  # sample std: 1.0
    assert row["n_seeds"] == 3 and row["seeds"] == "1,10,100"
    assert row["condition_label"] == "patch λ=0.7" and row["task"] == "image-stress"
    assert records.condition_values(agg.loc[[row.name]], "lam").iloc[0] == 0.7
    single = agg[(agg["condition"] == "set=danger") & (agg["metric"] == "i2t_R@1")]
    # one record: no std, not 0
    assert len(single) == 2 and (single["n_seeds"] == 1).all() and single["std"].isna().all()


def test_known_values_are_unchanged(full):
    _, _, out = full
    agg = pd.read_csv(out / "summary_agg.csv").set_index(["model", "task", "condition", "metric"])[
        "mean"
    ]
    assert agg[("rn50-openai", "retrieval", "original", "i2t_R@1")] == 65.0
    assert agg[("vit-b-32-random", "retrieval", "original", "t2i_R@1")] == 40.0
    assert agg[("rn50-openai", "text-stress", "set=same_concept", "i2t_drop_rate")] == round(
        100 * 10 / 65, 4
    )
    assert agg[("vit-b-32-random", "text-stress", "set=danger", "i2t_false_R@1")] == 20.0


def test_order_and_labels(full):
    _, _, out = full
    agg = pd.read_csv(out / "summary_agg.csv")
    # smaller model first; retrieval, text sets (registry order), image variants (registry order,
    # then λ)
    assert list(dict.fromkeys(agg["model"])) == ["rn50-openai", "vit-b-32-random"]
    cases = list(
        dict.fromkeys(
            zip(*(agg.loc[agg["model"] == "rn50-openai", c] for c in ("task", "condition_label")))
        )
    )
    assert cases[:5] == [("retrieval", "original")] + [
        ("text-stress", s) for s in ("same-concept", "diff-concept", "rand-voca", "danger")
    ]
    assert cases[5:] == [
        ("image-stress", c) for c in ("mix λ=0.7", "mix λ=0.9", "patch λ=0.7", "patch λ=0.9")
    ]
    labels = dict(zip(agg["model"], agg["label"]))
    assert labels == {"rn50-openai": "RN50 (openai)", "vit-b-32-random": "ViT-B-32 (random-init)"}
    metrics = list(
        agg.loc[(agg["model"] == "rn50-openai") & (agg["condition"] == "set=danger"), "metric"]
    )
    assert metrics == [
        "i2t_R@1",
        "i2t_R@5",
        "i2t_R@10",
        "i2t_R@1_original",
        "i2t_false_R@1",
        "i2t_drop_rate",
    ]


def test_dvc_metrics_json(full):
    _, _, out = full
    nested = scores(out)  # one flat file per (task, condition, model): a row of `dvc metrics show`
    meta = json.loads((out / "scores.json").read_text())
    assert meta["provenance"]["step"] == "summarize"
    assert len(meta["files"]) == sum(len(c) for m in nested.values() for c in m.values())
    mix = nested["vit-b-32-random"]["image-stress"][MIX_09]
    assert mix["n_seeds"] == 3 and mix["t2i_R@1_std"] == pytest.approx(1.0)
    assert mix["t2i_R@1"] == pytest.approx(
        sum(t2i_value("vit-b-32-random", "mix", 0.9, s) for s in SEEDS) / 3, abs=1e-4
    )
    # single record: no std key
    assert "i2t_R@1_std" not in nested["vit-b-32-random"]["retrieval"]["original"]


def test_plot_csv_and_markdown(full):
    _, _, out = full
    plot = pd.read_csv(out / "plots" / "stress.csv")
    assert list(plot.columns) == [
        "case",
        "model",
        "direction",
        "condition",
        "R@1",
        "false_R@1",
        "drop_rate",
    ]
    assert plot["case"].is_unique
    assert "RN50 (openai) | text → image | mix λ=0.9" in set(plot["case"])
    assert "RN50 (openai) | image → text | original" in set(plot["case"])
    # per model: original x 2 directions, 4 text sets, 4 image conditions
    assert len(plot) == 2 * (2 + 4 + 4)
    md = (out / "summary.md").read_text()
    assert "±" in md and "ViT-B-32 (random-init)" in md and "<!-- provenance" in md
    # one table per task: the image-stress table has its conditions and seeds
    section = md.split("(`image-stress`)")[1].split("\n### ")[0]
    header = next(line for line in section.splitlines() if line.startswith("| model"))
    assert [c.strip() for c in header.strip("|").split("|")][:3] == [
        "model",
        "condition",
        "seeds",
    ]


def test_outputs_are_deterministic(full, tmp_path):
    root, paths, out = full
    again, _ = summarize(tmp_path, paths, out="again")
    files = [f"scores/{p.relative_to(out / 'scores')}" for p in (out / "scores").rglob("*.json")]
    assert files and sorted(files) == sorted(
        f"scores/{p.relative_to(again / 'scores')}" for p in (again / "scores").rglob("*.json")
    )
    for name in [n for n in OUTPUTS if n != "scores"] + files:
        first, second = (out / name).read_bytes(), (again / name).read_bytes()
        if name in ("summary.md",):  # the provenance block names the output paths
            first, second = (
                first.replace(str(out).encode(), b"X"),
                second.replace(str(again).encode(), b"X"),
            )
        assert first == second, name


def test_only_the_listed_records_no_stale_results(tmp_path):
    """A record lying in the same folder but not listed (a model removed from params) does not show
    up."""
    paths = write_records(tmp_path / "metrics", text=False, image=False)
    stale = record("rn50-openai", "retrieval", {}, {"i2t_R@1": 1.0})
    stale = type(stale)(
        **{
            **stale.__dict__,
            "model": {"slug": "old-model", "arch": "RN101", "weights": "hub:openai"},
        }
    )
    write(tmp_path / "metrics", [stale])
    assert (tmp_path / "metrics" / "old-model" / "retrieval.json").is_file()
    out, _ = summarize(tmp_path, paths)
    table = pd.read_csv(out / "summary.csv")
    assert set(table["model"]) == {"rn50-openai", "vit-b-32-random"}
    assert "old-model" not in scores(out)


def test_missing_record_names_it_and_its_step(tmp_path):
    paths = write_records(tmp_path / "metrics", text=False, image=False)
    missing = tmp_path / "metrics" / "rn50-openai" / "text-stress-set=danger.json"
    out, result = summarize(tmp_path, [*paths, missing], check=False)
    assert result.returncode == 2
    assert f"metric record not found: {missing}" in result.stderr and "evaluate" in result.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    "kinds, tasks, absent",
    [
        ({"text": False, "image": False}, {"retrieval"}, ("no text stress", "no image stress")),
        (
            {"retrieval": False, "image": False},
            {"text-stress"},
            ("no retrieval", "no image stress"),
        ),
        ({"retrieval": False, "text": False}, {"image-stress"}, ("no retrieval", "no text stress")),
    ],
    ids=["only-retrieval", "only-text-stress", "only-image-stress"],
)
def test_a_suite_alone_is_summarized_absent_tasks_absent(tmp_path, kinds, tasks, absent):
    out, result = summarize(tmp_path, write_records(tmp_path / "metrics", **kinds))
    table = pd.read_csv(out / "summary.csv")
    assert set(table["task"]) == tasks
    nested = scores(out)
    assert {task for model in nested.values() for task in model} == tasks
    for text in absent:
        assert text in result.stderr
    plot = pd.read_csv(out / "plots" / "stress.csv")
    if tasks == {"retrieval"}:
        assert set(plot["condition"]) == {"original"} and plot["false_R@1"].isna().all()
    else:
        assert "original" not in set(plot["condition"]) and plot["false_R@1"].notna().all()


def test_null_drop_rate_stays_null(tmp_path):
    recs = make_records(image=False)
    # original R@1 of 0: the drop rate is undefined, written as null
    recs = [
        type(r)(**{**r.__dict__, "metrics": {**r.metrics, "i2t_drop_rate": None}})
        if r.model["slug"] == "vit-b-32-random" and r.condition == {"set": "danger"}
        else r
        for r in recs
    ]
    out, _ = summarize(tmp_path, write(tmp_path / "metrics", recs))
    nested = scores(out)
    assert nested["vit-b-32-random"]["text-stress"]["set=danger"]["i2t_drop_rate"] is None
    assert all("NaN" not in p.read_text() for p in (out / "scores").rglob("*.json"))
    agg = pd.read_csv(out / "summary_agg.csv")
    sel = (
        (agg["condition"] == "set=danger")
        & (agg["metric"] == "i2t_drop_rate")
        & (agg["model"] == "vit-b-32-random")
    )
    assert math.isnan(agg[sel]["mean"].iloc[0])


def test_errors_name_the_problem(tmp_path):
    result = run_cli(
        "summarize",
        "--out-csv",
        "a",
        "--out-agg",
        "b",
        "--out-md",
        "c",
        "--out-scores",
        "d",
        "--out-plot",
        "e",
        check=False,
    )
    # one source is required
    assert result.returncode == 2 and "--record" in result.stderr and "--params" in result.stderr
    bad = tmp_path / "bad" / "m" / "retrieval.json"
    bad.parent.mkdir(parents=True)
    bad.write_text(json.dumps({"schema": "vlstress.record/1", "task": "retrieval", "metrics": {}}))
    out, result = summarize(tmp_path, [bad], out="bad-out", check=False)
    assert (
        result.returncode == 2
        and "retrieval.json" in result.stderr
        and "'model' is a required property" in result.stderr
    )
    assert not out.exists()  # nothing half-written


def test_record_and_params_are_mutually_exclusive(tmp_path):
    paths = write_records(tmp_path / "metrics", text=False, image=False)
    result = run_cli(
        "summarize",
        *record_flags(paths),
        "--params",
        "params.yaml",
        "--out-csv",
        "a",
        "--out-agg",
        "b",
        "--out-md",
        "c",
        "--out-scores",
        "d",
        "--out-plot",
        "e",
        check=False,
        cwd=tmp_path,
    )
    assert result.returncode == 2 and "not allowed with argument" in result.stderr


def test_duplicate_seed_is_an_error(tmp_path):
    paths = write_records(tmp_path / "metrics", text=False, lams=(0.9,), seeds=(1,))
    dup = record(
        "rn50-openai",
        "image-stress",
        {"lam": 0.90, "perturbation": "mix", "seed": 1},
        {"t2i_R@1": 1.0},
    )
    extra = tmp_path / "metrics" / "rn50-openai" / "copy.json"
    write(tmp_path / "copy", [dup])[0].rename(extra)
    with pytest.raises(VlstressError, match=r"same seed \(1\).*copy\.json"):
        records.collect([*paths, extra])


def test_two_models_with_one_arch_and_weights_are_told_apart(tmp_path):
    recs = make_records(text=False, image=False)
    twin = recs[0]
    twin = type(twin)(**{**twin.__dict__, "model": {**twin.model, "slug": "vit-b-32-random-copy"}})
    table = records.collect(write(tmp_path / "metrics", [*recs, twin]))
    labels = set(table["label"])
    assert (
        "vit-b-32-random: ViT-B-32 (random-init)" in labels
        and "vit-b-32-random-copy: ViT-B-32 (random-init)" in labels
    )


def test_records_without_model_size_still_summarize(tmp_path):
    recs = make_records(text=False, image=False)
    recs = [
        type(r)(
            **{
                **r.__dict__,
                "provenance": {
                    **r.provenance,
                    "model": {k: v for k, v in r.provenance["model"].items() if k != "n_params"},
                },
            }
        )
        if r.model["slug"] == "rn50-openai"
        else r
        for r in recs
    ]
    table = records.collect(write(tmp_path / "metrics", recs))
    assert table.loc[table["model"] == "rn50-openai", "n_params"].isna().all()
    # unknown size sorts last
    assert list(dict.fromkeys(table["model"])) == [
        "vit-b-32-random",
        "rn50-openai",
    ]


def test_unknown_perturbation_and_task_just_work(tmp_path):
    """A new perturbation ("flip") and an unregistered task need no registry entry: shown as they
    are, sorted after."""
    recs = make_records(text=False, lams=(0.9,), seeds=(1,))
    flip = record(
        "rn50-openai",
        "image-stress",
        {"perturbation": "flip", "lam": 0.5, "seed": 1},
        {"t2i_R@1": 30.0},
    )
    zeroshot = record(
        "rn50-openai", "zeroshot", {"corruption": "fog", "severity": 3}, {"top1": 0.5}
    )
    table = records.collect(write(tmp_path / "metrics", [*recs, flip, zeroshot]))
    rn50 = table[table["model"] == "rn50-openai"]
    cases = list(dict.fromkeys(zip(rn50["task"], rn50["condition_label"])))
    assert cases == [
        ("retrieval", "original"),
        ("image-stress", "mix λ=0.9"),
        ("image-stress", "patch λ=0.9"),
        ("image-stress", "flip λ=0.5"),
        ("zeroshot", "fog severity=3"),
    ]
    assert set(rn50.loc[rn50["task"] == "zeroshot", "condition"]) == {"corruption=fog,severity=3"}


def test_the_report_docs_list_every_task_of_the_registry():
    from pathlib import Path

    from vlstress.report.tasks import TASKS

    text = (Path(__file__).resolve().parents[1] / "docs/report.md").read_text()
    assert [task for task in TASKS if f"| `{task}` |" not in text] == []
