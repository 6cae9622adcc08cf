"""The adversarial suite's intervals: table cells `value [lo, hi]` equal statsmodels' Wilson
interval over the attacked images (robust top-1) and over the correctly classified ones (attack
success), n stated; the eps figure draws one band per attack line, the query figure Wilson bars
over the correctly classified images."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from matplotlib.collections import LineCollection, PolyCollection
from statsmodels.stats.proportion import proportion_confint

from vlstress.report.figures import setup
from vlstress.suites.adversarial import figures, table


def _wilson(count: float, n: float) -> tuple[float, float]:
    lo, hi = proportion_confint(count, n, alpha=0.05, method="wilson")
    return 100.0 * lo, 100.0 * hi


def _rows(label: str, attack: str, eps: float, n: int | None, metrics: dict) -> list[dict]:
    condition = json.dumps({"attack": attack, "eps": eps}, sort_keys=True)
    return [
        {
            "model": label,
            "label": label,
            "arch": "x",
            "weights": "random-init (seed 0)",
            "weights_kind": "random-init",
            "n_params": 1000,
            "dataset": "objects",
            "n_images": n,
            "n_captions": None,
            "n_classes": 4,
            "task": "adversarial",
            "condition": condition,
            "condition_label": condition,
            "condition_json": condition,
            "seed": None,
            "metric": metric,
            "value": value,
        }
        for metric, value in metrics.items()
    ]


def _table(n: int | None = 4) -> pd.DataFrame:
    """Model A: 3 of 4 right clean; pgd eps 1 leaves 1 (2 of the 3 broken), eps 4 none; model B:
    1 of 4 right, square eps 4 breaks none of it."""
    rows = _rows("A", "pgd", 1.0, n, {"top1_clean": 75.0, "robust_top1": 25.0,
                                      "attack_success": 200 / 3, "queries": 3.0})  # fmt: skip
    rows += _rows("A", "pgd", 4.0, n, {"top1_clean": 75.0, "robust_top1": 0.0,
                                       "attack_success": 100.0, "queries": 3.0})  # fmt: skip
    rows += _rows("B", "square", 4.0, n, {"top1_clean": 25.0, "robust_top1": 25.0,
                                          "attack_success": 0.0, "queries": 14.0})  # fmt: skip
    return pd.DataFrame(rows)


def _cell(value: float, count: float, n: float) -> str:
    lo, hi = _wilson(count, n)
    return f"{value:.1f} [{lo:.1f}, {hi:.1f}]"


def test_the_tables_give_each_share_its_wilson_interval_and_n():
    long = _table()
    agg = table.records.aggregate(long)
    counts = table.attacked_counts(long)
    robust = table.adversarial_table(agg, counts)
    assert robust is not None
    assert list(robust.columns) == ["n", "clean top-1", "pgd ε=1", "pgd ε=4", "square ε=4"]
    assert robust.loc["A", "n"] == "4"
    assert robust.loc["A", "clean top-1"] == _cell(75.0, 3, 4)
    assert robust.loc["A", "pgd ε=1"] == _cell(25.0, 1, 4)
    assert robust.loc["A", "pgd ε=4"] == _cell(0.0, 0, 4)
    assert robust.loc["A", "square ε=4"] == "–"  # not attacked
    cost = table.cost_table(agg, counts)
    assert cost is not None
    # success is a share of the correctly classified images: 3 for A, 1 for B
    assert cost.loc["A", "n correct"] == "3" and cost.loc["B", "n correct"] == "1"
    assert cost.loc["A", "pgd ε=1"] == f"{_cell(200 / 3, 2, 3)} (3 q)"
    assert cost.loc["B", "square ε=4"] == f"{_cell(0.0, 0, 1)} (14 q)"
    markdown, latex, _ = table.render(long, {"step": "tables"})
    assert _cell(25.0, 1, 4) in markdown and _cell(25.0, 1, 4) in latex
    assert "95% Wilson interval" in markdown


def test_without_n_a_cell_is_the_value_alone():
    long = _table(n=None)
    agg = table.records.aggregate(long)
    robust = table.adversarial_table(agg, table.attacked_counts(long))
    assert robust is not None
    assert robust.loc["A", "pgd ε=1"] == "25.0" and robust.loc["A", "n"] == "–"
    assert table.share_cell(None, 4) == "–" and table.share_cell(50.0, 0) == "50.0"


def test_the_eps_figure_bands_each_attack_line_with_its_wilson_interval():
    setup()
    fig, notes = figures.adversarial_eps(_table())
    a, b = fig.axes[:2]
    assert len([c for c in a.collections if isinstance(c, PolyCollection)]) == 1  # pgd
    band = next(c for c in a.collections if isinstance(c, PolyCollection))
    vertices = band.get_paths()[0].vertices
    # the band's ends at eps 0 (clean: 3 of 4) and eps 4 (0 of 4)
    assert {round(y, 6) for x, y in vertices if x == 0.0} == {round(v, 6) for v in _wilson(3, 4)}
    assert {round(y, 6) for x, y in vertices if x == 4.0} == {round(v, 6) for v in _wilson(0, 4)}
    assert len([c for c in b.collections if isinstance(c, PolyCollection)]) == 1  # square
    assert notes[0].startswith("n = 4 attacked images per model")
    assert "Wilson" in notes[1]


def test_the_query_figure_bars_success_over_the_correctly_classified_images():
    setup()
    fig, notes = figures.adversarial_queries(_table())
    spans = sorted(
        tuple(round(y, 6) for y in segment[:, 1])
        for c in fig.axes[0].collections
        if isinstance(c, LineCollection)
        for segment in c.get_segments()
    )
    want = sorted(
        tuple(round(v, 6) for v in _wilson(count, 3)) for count in (2, 3)
    )  # pgd at eps 1 and 4 on the 3 images A classifies right
    assert spans == want
    assert "n = 1–3 correctly classified of 4 attacked images per (model, eps)" in notes
    assert any("Wilson" in n for n in notes)
    assert np.isclose(figures.correct_images(75.0, 4), 3.0)
