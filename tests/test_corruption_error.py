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


def test_a_meaningless_mce_is_flagged_with_the_reason():
    # the baseline is at 0% under fog (error 100% whatever fog does) and loses nothing under noise
    top1 = _grid(
        [
            ("base", "fog", 1, 0.0),
            ("base", "noise", 1, 40.0),
            ("m", "fog", 1, 30.0),
            ("m", "noise", 1, 50.0),
        ]
    )
    table = corruption_table(top1, {"base": 40.0, "m": 70.0}, "base").set_index("model")
    note = table.loc["m", "mCE_note"]
    assert "0% top-1 under fog" in note and "loses no top-1 under noise" in note
    assert pd.notna(table.loc["m", "mCE"])  # still reported, now with the reason it means nothing
    # a baseline that drops under every corruption and is above chance: no note
    fine = _grid([("base", "fog", 1, 20.0), ("m", "fog", 1, 30.0)])
    table = corruption_table(fine, {"base": 40.0, "m": 70.0}, "base")
    assert table["mCE_note"].isna().all()
    # no baseline, no mCE and nothing to flag
    assert corruption_table(fine, {"base": 40.0}, None)["mCE_note"].isna().all()


def test_mce_is_computed_from_the_records_unrounded(tmp_path):
    """Accuracies of k/7 images have no 4-decimal form: the summary must carry them whole."""
    from vlstress.record import write_record
    from vlstress.report import records as summary_records
    from vlstress.suites.zeroshot.robustness_summary import corruption_top1

    from report_fixtures import record

    accuracies = {  # model -> (clean, fog s1, fog s3) in images out of 7
        "vit-b-32-random": (6, 2, 1),
        "rn50-openai": (7, 5, 3),
    }
    paths = []
    for model, (clean, *severe) in accuracies.items():
        for severity, k in zip((1, 3), severe):
            rec = record(
                model,
                "corruption",
                {"set": "objects", "corruption": "fog", "severity": severity},
                {"top1": 100 * k / 7, "top1_clean": 100 * clean / 7},
            )
            paths.append(tmp_path / f"{model}-{severity}.json")
            write_record(paths[-1], rec)
    top1, clean = corruption_top1(summary_records.collect(paths))
    table = corruption_table(top1, clean, "vit-b-32-random").set_index("model")
    # errors: base 5/7, 6/7 -> 11/7; rn50 2/7, 4/7 -> 6/7: CE = 6/11 exactly
    assert table.loc["rn50-openai", "mCE"] == pytest.approx(100 * 6 / 11, rel=1e-12, abs=0)
    # relative: (2/7 - 0 + 4/7 - 0) / (5/7 - 1/7 + 6/7 - 1/7) = 6/9
    assert table.loc["rn50-openai", "relative_mCE"] == pytest.approx(100 * 6 / 9, rel=1e-12, abs=0)
