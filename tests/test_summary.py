"""`vlstress summarize`: per-seed rows, mean/std/n_seeds over variant seeds, DVC metrics, determinism, errors."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from conftest import run_cli
from report_fixtures import SEEDS, record, t2i_value, write_records
from vlstress.errors import VlstressError
from vlstress.report import records

OUTPUTS = ("summary.csv", "summary_agg.csv", "summary.md", "metrics.json", "plots/stress.csv")


def summarize(tmp_path, metrics_dir, out="out", check=True):
    out = tmp_path / out
    result = run_cli(
        "summarize", "--metrics-dir", str(metrics_dir), "--out-csv", str(out / "summary.csv"),
        "--out-agg", str(out / "summary_agg.csv"), "--out-md", str(out / "summary.md"),
        "--out-json", str(out / "metrics.json"), "--out-plot", str(out / "plots" / "stress.csv"), check=check,
    )  # fmt: skip
    return out, result


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    root = tmp_path_factory.mktemp("full")
    metrics = write_records(root / "metrics")
    out, _ = summarize(root, metrics)
    return root, metrics, out


def test_per_seed_rows_are_kept(full):
    _, _, out = full
    table = pd.read_csv(out / "summary.csv")
    mix = table[(table["condition"] == "image-mix-lam0.9") & (table["metric"] == "t2i_R@1")]
    assert sorted(mix["variant_seed"]) == sorted(2 * list(SEEDS))  # two models x three seeds
    assert set(table["stress"]) == {"none", "text", "image"}
    # a sidecar with provenance for every CSV
    meta = json.loads((out / "summary.csv.json").read_text())
    assert meta["provenance"]["step"] == "summarize" and meta["rows"] == len(table)


def test_mean_std_n_seeds_known_answer(full):
    _, _, out = full
    agg = pd.read_csv(out / "summary_agg.csv")
    row = agg[(agg["model"] == "rn50-openai") & (agg["condition"] == "image-patch-lam0.7") & (agg["metric"] == "t2i_R@1")]
    assert len(row) == 1
    row = row.iloc[0]
    values = [t2i_value("rn50-openai", "patch", 0.7, s) for s in SEEDS]
    assert row["mean"] == pytest.approx(sum(values) / 3, abs=1e-4)
    assert row["std"] == pytest.approx(pd.Series(values).std(ddof=1), abs=1e-4)  # sample std: 1.0
    assert row["n_seeds"] == 3 and row["seeds"] == "1,10,100"
    assert row["condition_label"] == "patch λ=0.7" and row["lam"] == 0.7
    single = agg[(agg["condition"] == "text-danger") & (agg["metric"] == "i2t_R@1")]
    assert (single["n_seeds"] == 1).all() and single["std"].isna().all()  # one seed: no std, not 0


def test_order_and_labels(full):
    _, _, out = full
    agg = pd.read_csv(out / "summary_agg.csv")
    # smaller model first; original, text sets (registry order), image variants
    assert list(dict.fromkeys(agg["model"])) == ["rn50-openai", "vit-b-32-random"]
    conditions = list(dict.fromkeys(agg.loc[agg["model"] == "rn50-openai", "condition"]))
    assert conditions[:5] == ["original", "text-same_concept", "text-diff_concept", "text-rand_voca", "text-danger"]
    assert conditions[5:] == ["image-mix-lam0.7", "image-mix-lam0.9", "image-patch-lam0.7", "image-patch-lam0.9"]
    labels = dict(zip(agg["model"], agg["label"]))
    assert labels == {"rn50-openai": "RN50 (openai)", "vit-b-32-random": "ViT-B-32 (random-init)"}


def test_dvc_metrics_json(full):
    _, _, out = full
    nested = json.loads((out / "metrics.json").read_text())
    assert "provenance" not in nested  # numbers only, for `dvc metrics show`
    assert json.loads((out / "metrics.json.json").read_text())["provenance"]["step"] == "summarize"
    mix = nested["vit-b-32-random"]["image-mix-lam0.9"]
    assert mix["n_seeds"] == 3 and mix["t2i_R@1_std"] == pytest.approx(1.0)
    assert mix["t2i_R@1"] == pytest.approx(sum(t2i_value("vit-b-32-random", "mix", 0.9, s) for s in SEEDS) / 3, abs=1e-4)
    assert "i2t_R@1_std" not in nested["vit-b-32-random"]["original"]  # single record: no std key


def test_plot_csv_and_markdown(full):
    _, _, out = full
    plot = pd.read_csv(out / "plots" / "stress.csv")
    assert list(plot.columns) == ["case", "model", "direction", "condition", "R@1", "false_R@1", "drop_rate"]
    assert plot["case"].is_unique
    assert "RN50 (openai) | text → image | mix λ=0.9" in set(plot["case"])
    assert len(plot) == 2 * (2 + 4 + 4)  # per model: original x 2 directions, 4 text sets, 4 image conditions
    md = (out / "summary.md").read_text()
    assert "±" in md and "ViT-B-32 (random-init)" in md and "<!-- provenance" in md


def test_outputs_are_deterministic(full, tmp_path):
    root, metrics, out = full
    again, _ = summarize(tmp_path, metrics, out="again")
    for name in OUTPUTS:
        first, second = (out / name).read_bytes(), (again / name).read_bytes()
        if name in ("summary.md",):  # the provenance block names the output paths
            first, second = first.replace(str(out).encode(), b"X"), second.replace(str(again).encode(), b"X")
        assert first == second, name


def test_absent_families_are_absent_not_invented(tmp_path):
    metrics = write_records(tmp_path / "metrics", text=False, image=False)
    out, result = summarize(tmp_path, metrics)
    table = pd.read_csv(out / "summary.csv")
    assert set(table["stress"]) == {"none"}
    plot = pd.read_csv(out / "plots" / "stress.csv")
    assert set(plot["condition"]) == {"original"} and plot["false_R@1"].isna().all()
    assert "no text stress" in result.stderr and "no image stress" in result.stderr


def test_nan_drop_rate_becomes_null(tmp_path):
    metrics = write_records(tmp_path / "metrics", image=False)
    path = metrics / "vit-b-32-random" / "text-danger.json"
    rec = json.loads(path.read_text())
    rec["metrics"]["i2t_drop_rate"] = float("nan")  # original R@1 of 0: metrics.drop_rate gives NaN
    path.write_text(json.dumps(rec))  # writes the non-standard NaN literal, as json.dumps does
    out, _ = summarize(tmp_path, metrics)
    nested = json.loads((out / "metrics.json").read_text())
    assert nested["vit-b-32-random"]["text-danger"]["i2t_drop_rate"] is None
    assert "NaN" not in (out / "metrics.json").read_text()
    agg = pd.read_csv(out / "summary_agg.csv")
    assert math.isnan(agg[(agg["condition"] == "text-danger") & (agg["metric"] == "i2t_drop_rate") & (agg["model"] == "vit-b-32-random")]["mean"].iloc[0])


def test_errors_name_the_problem(tmp_path):
    (tmp_path / "empty").mkdir()
    _, result = summarize(tmp_path, tmp_path / "empty", check=False)
    assert result.returncode == 2 and "no metric records under" in result.stderr
    bad = tmp_path / "bad" / "m"
    bad.mkdir(parents=True)
    (bad / "original.json").write_text(json.dumps({"model": "m", "metrics": {}}))
    out, result = summarize(tmp_path, tmp_path / "bad", out="bad-out", check=False)
    assert result.returncode == 2 and "original.json" in result.stderr and "missing key" in result.stderr
    assert not out.exists()  # nothing half-written


def test_duplicate_seed_is_an_error(tmp_path):
    metrics = write_records(tmp_path / "metrics", text=False, lams=(0.9,), seeds=(1,))
    dup = record("rn50-openai", "image-mix-lam0.90-seed1", "image", "mix", {"t2i_R@1": 1.0}, lam=0.9, seed=1)
    (metrics / "rn50-openai" / "image-mix-lam0.90-seed1.json").write_text(json.dumps(dup))
    with pytest.raises(VlstressError, match="same variant seed"):
        records.collect(metrics)


def test_records_without_model_size_still_summarize(tmp_path):
    metrics = write_records(tmp_path / "metrics", text=False, image=False)
    path = metrics / "rn50-openai" / "original.json"
    rec = json.loads(path.read_text())
    del rec["provenance"]["model"]["n_params"]
    path.write_text(json.dumps(rec))
    table = records.collect(metrics)
    assert table.loc[table["model"] == "rn50-openai", "n_params"].isna().all()
    assert list(dict.fromkeys(table["model"])) == ["vit-b-32-random", "rn50-openai"]  # unknown size sorts last
