"""The headline table of the findings suite: the tasks' declared headline metrics, one row per
(model, task, set, condition), Wilson intervals for shares, the pool percentile."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from vlstress.report import tasks
from vlstress.report.headlines import headline_table, percentiles
from vlstress.report.intervals import wilson_percent
from vlstress.report.records import RECORD_COLUMNS, read_summary

REPO = Path(__file__).resolve().parents[1]


def test_wilson_matches_newcombes_published_intervals():
    """Newcombe (1998), Statistics in Medicine 17:857, Table I, method 3 (score interval):
    81/263 -> 0.2553-0.3662, 15/148 -> 0.0624-0.1605, 20/20 -> 0.8389-1."""
    lo, hi = wilson_percent(
        np.array([81 / 263 * 100, 15 / 148 * 100, 100.0]), np.array([263, 148, 20])
    )
    assert np.round(lo / 100, 4).tolist() == [0.2553, 0.0624, 0.8389]
    assert np.round(hi / 100, 4).tolist() == [0.3662, 0.1605, 1.0]


def test_wilson_is_empty_without_items_and_narrows_with_more():
    lo, hi = wilson_percent(np.array([20.0, 20.0, 20.0, np.nan]), np.array([30, 300, 0, 30]))
    assert np.isnan(lo[2]) and np.isnan(hi[3])
    assert hi[0] - lo[0] > 2.5 * (hi[1] - lo[1])  # about sqrt(10) narrower
    # the demo's n = 30: a top-1 of 20% is 9.5% to 37.3%, an interval of about ±14 points
    assert (round(lo[0], 1), round(hi[0], 1)) == (9.5, 37.3)


def _row(model, task, metric, value, **kw):
    row = dict.fromkeys(RECORD_COLUMNS)
    row.update(
        model=model,
        label=model,
        arch="ViT-S-32-alt",
        weights="random-init (seed 0)",
        weights_kind="random-init",
        dataset="objects",
        n_images=30,
        n_captions=150,
        task=task,
        condition="original",
        condition_label="original",
        condition_json="{}",
        metric=metric,
        value=value,
    )
    row.update(kw)
    return row


def _summary(tmp_path: Path, rows: list[dict]) -> pd.DataFrame:
    path = tmp_path / "summary.csv"
    pd.DataFrame(rows, columns=RECORD_COLUMNS).to_csv(path, index=False)
    return read_summary(path)


def test_headlines_follow_each_tasks_declaration(tmp_path):
    cat = {"condition": "category=cat", "condition_label": "cat"}
    everything = {"condition": "category=all", "condition_label": "all"}
    summary = _summary(
        tmp_path,
        [
            _row("a", "zeroshot", "top1", 20.0),
            _row("a", "zeroshot", "top5", 60.0),  # not a headline
            _row("b", "zeroshot", "top1", 40.0),
            # two replicate seeds: their mean
            _row("a", "retrieval", "t2i_R@1", 10.0, seed=0, dataset="demo"),
            _row("a", "retrieval", "t2i_R@1", 20.0, seed=1, dataset="demo"),
            # shape bias (a fraction): a share of the shape + texture decisions (percent of the
            # 16 cue-conflict images: 3 and 9 of them), of the category "all" only
            *(
                _row("a", "shape_bias", metric, value, **everything)
                for metric, value in [
                    ("shape_bias", 0.25),
                    ("shape_decisions", 18.75),
                    ("texture_decisions", 56.25),
                    ("n_conflict", 16),
                ]
            ),
            _row("a", "shape_bias", "shape_bias", 0.5, **cat),
            _row("a", "calibration", "ece", 4.0),
            _row("b", "calibration", "ece", 9.0),
        ],
    )
    table = headline_table(summary).set_index(["model", "task", "metric"])
    assert sorted(table.index) == sorted(
        [
            ("a", "zeroshot", "top1"),
            ("b", "zeroshot", "top1"),
            ("a", "retrieval", "t2i_R@1"),
            ("a", "shape_bias", "shape_bias"),
            ("a", "calibration", "ece"),
            ("b", "calibration", "ece"),
        ]
    )
    retrieval = table.loc[("a", "retrieval", "t2i_R@1")]
    assert (retrieval["value"], retrieval["n"], retrieval["n_seeds"]) == (15.0, 150, 2)
    shape = table.loc[("a", "shape_bias", "shape_bias")]
    assert (shape["value"], shape["n"], shape["condition"]) == (25.0, 12, "category=all")
    expected = wilson_percent(np.array([25.0]), np.array([12]))
    assert (shape["lo"], shape["hi"]) == pytest.approx((expected[0][0], expected[1][0]))
    ece = table.loc[("a", "calibration", "ece")]
    assert np.isnan(ece["lo"]) and ece["interval"] == "" and not ece["higher_is_better"]
    # a lower ECE is better: model a is ahead of b there, behind it on top-1
    frame = headline_table(summary)
    frame["percentile"] = percentiles(frame)
    at = frame.set_index(["model", "task"])["percentile"]
    assert at[("a", "calibration")] == 100.0 and at[("b", "calibration")] == 0.0
    assert at[("a", "zeroshot")] == 0.0 and at[("b", "zeroshot")] == 100.0
    assert np.isnan(at[("a", "retrieval")])  # alone on its row: no percentile


def test_the_demos_headline_metrics_are_metrics_its_records_write():
    """Every headline a task declares names a metric its records carry (the committed demo
    summary): a renamed metric cannot leave the cards silently empty."""
    summary = read_summary(REPO / "results" / "summary.csv")
    written = summary.groupby("task")["metric"].agg(set)
    for name, task in tasks.TASKS.items():
        if name not in written:
            continue  # a suite the demo leaves off (video, visual factors)
        for headline in task.headlines:
            assert headline.metric in written[name], (name, headline.metric)
            counts = {headline.n_metric, *headline.n_share} - {None}
            assert counts <= written[name], (name, counts)


def test_a_metric_with_outcomes_gets_the_bootstrap_of_its_items(tmp_path):
    """ECE is no share: its interval is the seeded BCa bootstrap of the record's images, the same
    as scipy's on the calibration suite's own resampling; a case without outcomes has none."""
    from scipy.stats import bootstrap

    from vlstress.report.headlines import Bootstrap
    from vlstress.suites.calibration.resampling import ece_resampling, image_outcomes

    rng = np.random.default_rng(0)
    logits = rng.normal(size=(60, 4)) * 3
    labels = rng.integers(0, 4, size=60)
    block = image_outcomes(logits, labels, temperature=1.5)
    resampling = ece_resampling(block)
    ece = resampling.statistic(*resampling.samples)
    condition = "set=objects,split=held-out"
    summary = _summary(
        tmp_path,
        [
            _row("a", "calibration", "ece", ece, condition=condition),
            _row("b", "calibration", "ece", 20.0, condition=condition),
        ],
    )
    found = {("a", "objects", "calibration", condition): [block]}
    table = headline_table(summary, 0.95, Bootstrap(found, n_resamples=300, seed=5))
    rows = table[table["metric"] == "ece"].set_index("model")
    direct = bootstrap(
        resampling.samples,
        resampling.statistic,
        paired=True,
        vectorized=False,
        n_resamples=300,
        method="BCa",
        random_state=np.random.default_rng(5),
    ).confidence_interval
    assert (rows.loc["a", "lo"], rows.loc["a", "hi"]) == pytest.approx((direct.low, direct.high))
    assert rows.loc["a", "lo"] < ece < rows.loc["a", "hi"]
    assert rows.loc["a", "interval"] == "BCa bootstrap"
    assert np.isnan(rows.loc["b", "lo"]) and rows.loc["b", "interval"] == ""


def test_outcomes_are_matched_to_their_records_by_position(tmp_path):
    from vlstress.errors import VlstressError
    from vlstress.outcomes import Outcomes, outcomes_path, write_outcomes
    from vlstress.record import Record
    from vlstress.report.items import case_outcomes

    def record(condition):
        model = {"slug": "m", "arch": "a", "weights": "w"}
        return Record("ood", model, {"name": "objects"}, condition, {}, {})

    path = tmp_path / "ood-near.json"
    found = [(path, record({"score": "msp"})), (path, record({"score": "energy"}))]
    blocks = [Outcomes("image", {"score": np.arange(float(n))}) for n in (3, 4)]
    write_outcomes(outcomes_path(path), blocks)
    by_case = case_outcomes(found, [outcomes_path(path)])
    assert by_case[("m", "objects", "ood", "score=energy")][0].n == 4
    assert case_outcomes(found, []) == {}  # not declared: not read
    write_outcomes(outcomes_path(path), blocks[:1])
    with pytest.raises(VlstressError, match="1 block\\(s\\) for the 2 record\\(s\\)"):
        case_outcomes(found, [outcomes_path(path)])


def test_non_share_headlines_are_compared_with_the_paired_bootstrap():
    """Two models' OOD scores on the same images: AUROC and FPR@95 rows with the paired bootstrap
    (values from the items, the difference's interval, p), Holm over the table."""
    from vlstress.suites.findings.comparisons import comparison_table
    from vlstress.suites.ood.resampling import auroc_percent, image_outcomes

    rng = np.random.default_rng(4)
    ood_scores = rng.normal(0.0, 1.0, 40)
    good = image_outcomes(rng.normal(2.0, 1.0, 50), ood_scores)
    weak = image_outcomes(rng.normal(0.2, 1.0, 50), ood_scores)
    condition = "score=msp,set=scenes"
    items = {
        ("good", "objects", "ood", condition): [good],
        ("weak", "objects", "ood", condition): [weak],
    }
    table = comparison_table(items, 0.95, n_resamples=300, seed=1).set_index("metric")
    assert list(table.index) == ["auroc", "fpr95"]
    assert set(table["test"]) == {"paired BCa bootstrap"}
    is_ood = good.column("is_ood")
    auroc = table.loc["auroc"]
    assert auroc["value_a"] == pytest.approx(
        auroc_percent(good.column("score")[~is_ood], ood_scores)
    )
    assert auroc["difference"] == pytest.approx(auroc["value_a"] - auroc["value_b"])
    assert auroc["lo"] < auroc["difference"] < auroc["hi"] and auroc["lo"] > 0
    assert auroc["p"] < 0.01 and auroc["significant"]
    assert pd.isna(auroc["a_only"])
    assert table["p_holm"].tolist() == pytest.approx(
        np.minimum(1, np.maximum.accumulate(np.sort(table["p"]) * [2, 1]))[
            np.argsort(np.argsort(table["p"]))
        ]
    )
