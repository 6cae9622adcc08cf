"""mCE, relative mCE, mean corruption accuracy: known answers on hand-made accuracies."""

from __future__ import annotations

import pandas as pd
import pytest

from vlstress.errors import VlstressError
from vlstress.suites.zeroshot.corruption_error import corruption_table


def _grid(rows):
    return pd.DataFrame(rows, columns=["model", "corruption", "severity", "top1"])


def test_mce_known_answer():
    # errors: base fog 50,70; base noise 40,60 | m fog 25,35; m noise 40,60
    top1 = _grid(
        [
            ("base", "fog", 1, 50.0),
            ("base", "fog", 3, 30.0),
            ("base", "noise", 1, 60.0),
            ("base", "noise", 3, 40.0),
            ("m", "fog", 1, 75.0),
            ("m", "fog", 3, 65.0),
            ("m", "noise", 1, 60.0),
            ("m", "noise", 3, 40.0),
        ]
    )
    clean = {"base": 80.0, "m": 90.0}
    table = corruption_table(top1, clean, "base").set_index("model")
    # CE_fog = 60/120, CE_noise = 100/100 -> mCE = 75
    assert table.loc["m", "mCE"] == pytest.approx(75.0)
    assert table.loc["base", "mCE"] == pytest.approx(100.0)
    # relative: fog (15+25)/(30+50) = 0.5, noise (30+50)/(20+40) = 4/3 -> mean 11/12
    assert table.loc["m", "relative_mCE"] == pytest.approx(100 * (0.5 + 4 / 3) / 2)
    assert table.loc["m", "mCA"] == pytest.approx(60.0)
    assert table.loc["m", "relative_drop"] == pytest.approx(100 * 30 / 90)
    assert table.loc["m", "n_corruptions"] == 2 and table.loc["m", "n_severities"] == 2


def test_no_baseline_no_mce_and_undefined_ratio():
    top1 = _grid([("a", "fog", 1, 100.0), ("b", "fog", 1, 50.0)])
    table = corruption_table(top1, {"a": 100.0, "b": 60.0}, None).set_index("model")
    assert table["mCE"].isna().all()
    perfect = corruption_table(top1, {"a": 100.0, "b": 60.0}, "a").set_index("model")
    # the baseline makes no error: CE undefined, not infinite
    assert perfect.loc["b", "mCE"] is None


def test_baseline_must_have_records_and_grids_match():
    top1 = _grid([("a", "fog", 1, 50.0), ("b", "fog", 1, 50.0), ("a", "fog", 3, 40.0)])
    with pytest.raises(VlstressError, match="baseline model 'c'"):
        corruption_table(top1, {}, "c")
    with pytest.raises(VlstressError, match="lack some"):
        corruption_table(top1, {}, "a")
