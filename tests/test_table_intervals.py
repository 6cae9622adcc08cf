"""The suites' tables show the headline table's intervals (`vlstress headlines`, then `vlstress
tables --headlines`): on a hand-made run of calibration records with per-image outcomes, each
ECE cell carries exactly the bootstrap interval the headline table holds, top-1 its Wilson
interval, and a case under 10 images its value alone; the case keys of the summary and of the
headline CSV meet, an empty condition included; a bad headline table is named."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from vlstress.cli import main
from vlstress.errors import VlstressError
from vlstress.outcomes import outcomes_path, write_outcomes
from vlstress.record import Record, write_record, write_records
from vlstress.report.frames import headline_cell
from vlstress.report.headlines import (
    Interval,
    intervals_by_case,
    items_by_case,
    read_headline_table,
)
from vlstress.report.records import collect, read_summary
from vlstress.suites.calibration.resampling import ece_percent, image_outcomes

# set name -> images: one set large enough for an interval, one under the bootstrap's minimum
SETS = {"objects": 40, "tiny": 6}


def _record(task: str, dataset: dict, condition: dict, metrics: dict) -> Record:
    return Record(
        task=task,
        model={"slug": "m", "arch": "ViT-S-32", "weights": "random-init (seed 0)"},
        dataset=dataset,
        condition=condition,
        metrics=metrics,
        provenance={
            "step": "calibrate",
            "model": {"arch": "ViT-S-32", "weights": "random-init", "slug": "m"},
            "params": {},
            "seed": 0,
        },
    )


def _write_run(root: Path) -> list[Path]:
    """Calibration records of one model on two sets (seeded logits, T = 1.5), their outcomes, and a
    zero-shot record whose condition is empty."""
    rng = np.random.default_rng(3)
    records, blocks, hits = [], [], {}
    for name, n in SETS.items():
        labels = rng.integers(0, 5, n)
        logits = rng.normal(size=(n, 5)) + 2.0 * np.eye(5)[labels] * (rng.random(n) < 0.5)[:, None]
        block = image_outcomes(logits, labels, 1.5)
        correct = block.column("correct", "test")
        hits[name] = int(correct.sum())
        metrics = {
            "top1": 100.0 * correct.mean(),
            "ece": ece_percent(block.column("confidence", "test"), correct),
            "ece_ts": ece_percent(
                block.column("confidence_ts", "test"), block.column("correct_ts", "test")
            ),
            "temperature": 1.5,
        }
        dataset = {"name": name, "n_images": n, "n_classes": 5}
        records.append(_record("calibration", dataset, {"set": name}, metrics))
        blocks.append(block)
    path = root / "results" / "metrics" / "m" / "calibration.json"
    write_records(path, records)
    write_outcomes(outcomes_path(path), blocks)
    zeroshot = root / "results" / "metrics" / "m" / "zeroshot-objects.json"
    objects = {"name": "objects", "n_images": 40, "n_classes": 5}
    write_record(zeroshot, _record("zeroshot", objects, {}, {"top1": 100.0 * hits["objects"] / 40}))
    return [path, zeroshot]


def tables(summary: Path, headlines: Path, module: str, out: Path) -> int:
    """`vlstress tables --headlines` of one suite's table module, Markdown to `out`."""
    return main(
        [
            "tables",
            "--summary",
            str(summary),
            "--headlines",
            str(headlines),
            "--module",
            f"vlstress.suites.{module}.table",
            "--out-md",
            str(out),
            "--out-tex",
            str(out.with_suffix(".tex")),
        ]
    )


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("run")
    paths = _write_run(root)
    summary = root / "results" / "summary.csv"
    collect(paths).to_csv(summary, index=False)
    flags = [arg for path in paths for arg in ("--record", str(path))]
    flags += ["--outcomes", str(outcomes_path(paths[0]))]
    assert (
        main(
            [
                "headlines",
                *flags,
                "--summary",
                str(summary),
                "--bootstrap",
                "300",
                "--out-csv",
                str(root / "results" / "headlines.csv"),
                "--out-md",
                str(root / "results" / "headlines.md"),
            ]
        )
        == 0
    )
    headlines = root / "results" / "headlines.csv"
    assert tables(summary, headlines, "calibration", root / "calibration.md") == 0
    return root


def _row(markdown: str, set_label: str) -> list[str]:
    line = next(line for line in markdown.splitlines() if f"| {set_label} " in line)
    return [cell.strip() for cell in line.strip("|").split("|")]


def _header(markdown: str) -> list[str]:
    line = next(line for line in markdown.splitlines() if line.startswith("| model"))
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_ece_cells_carry_the_headline_tables_bootstrap_interval(run):
    markdown = (run / "calibration.md").read_text(encoding="utf-8")
    headlines = pd.read_csv(run / "results" / "headlines.csv")
    columns = _header(markdown)
    cells = dict(zip(columns, _row(markdown, "objects")))
    for metric, title in (("ece", "ECE"), ("ece_ts", "ECE (T)")):
        found = headlines[(headlines["dataset"] == "objects") & (headlines["metric"] == metric)]
        assert found["interval"].iloc[0] == "BCa bootstrap"
        value, lo, hi = found[["value", "lo", "hi"]].iloc[0]
        assert lo <= value <= hi and hi - lo > 1.0  # 40 images: a wide interval
        assert cells[title] == f"{value:.1f} [{lo:.1f}, {hi:.1f}]"
    # top-1: Wilson over the 40 images, as statsmodels gives it
    hits = round(float(cells["Top-1"].split()[0]) * 40 / 100)
    lo, hi = proportion_confint(hits, 40, alpha=0.05, method="wilson")
    assert cells["Top-1"] == f"{100 * hits / 40:.1f} [{100 * lo:.1f}, {100 * hi:.1f}]"
    assert cells["n"] == "40"
    # NLL, Brier and T have no interval
    assert "[" not in cells["T"]


def test_a_case_under_ten_images_shows_its_value_alone(run):
    markdown = (run / "calibration.md").read_text(encoding="utf-8")
    cells = dict(zip(_header(markdown), _row(markdown, "tiny")))
    assert cells["n"] == "6"
    assert re.fullmatch(r"\d+\.\d", cells["ECE"])  # no bracket
    headlines = pd.read_csv(run / "results" / "headlines.csv")
    tiny = headlines[(headlines["dataset"] == "tiny") & (headlines["metric"] == "ece")]
    assert tiny["interval"].iloc[0] == "fewer than 10 items to resample"
    # Wilson needs no minimum: top-1 of 6 images keeps its interval
    assert "[" in cells["Top-1"]


def test_summary_and_headline_keys_meet_a_record_without_condition_included(run):
    summary = read_summary(run / "results" / "summary.csv")
    intervals = intervals_by_case(read_headline_table(run / "results" / "headlines.csv"))
    for task, metric in (("calibration", "ece"), ("zeroshot", "top1")):
        cases = items_by_case(summary, task)
        assert cases, task
        for case in cases:
            assert (*case, metric) in intervals, (task, case)
    zeroshot = next(iter(items_by_case(summary, "zeroshot")))
    assert zeroshot[3] == "original"  # a record without a condition
    assert intervals[(*zeroshot, "top1")].method == "Wilson"


def test_headline_cell_formats_and_falls_back():
    assert headline_cell(15.75, Interval(2.09, 35.93, "BCa bootstrap", 15)) == "15.8 [2.1, 35.9]"
    assert headline_cell(15.75, Interval(np.nan, np.nan, "degenerate", 15)) == "15.8"
    assert headline_cell(15.75, None) == "15.8"
    assert headline_cell(float("nan"), Interval(1.0, 2.0, "x", 15)) == "–"


def test_a_bad_headline_table_is_named(tmp_path, run):
    with pytest.raises(VlstressError, match=r"headline table not found: .*missing\.csv"):
        read_headline_table(tmp_path / "missing.csv")
    broken = tmp_path / "headlines.csv"
    pd.read_csv(run / "results" / "headlines.csv").drop(columns=["lo"]).to_csv(broken)
    with pytest.raises(VlstressError, match=r"headlines\.csv lacks column\(s\) lo; re-run"):
        read_headline_table(broken)
    out = tmp_path / "calibration.md"
    assert tables(run / "results" / "summary.csv", broken, "calibration", out) == 2
    assert not out.exists()


def test_a_module_without_intervals_refuses_the_headline_table(tmp_path, run, capsys):
    out = tmp_path / "stylized.md"
    results = run / "results"
    assert tables(results / "summary.csv", results / "headlines.csv", "stylized", out) == 2
    assert not out.exists()
    assert "vlstress.suites.stylized.table shows no intervals" in capsys.readouterr().err
