"""ImageNet-X visual factors: the error ratio on hand-made predictions, agreement with the
`imagenet-x` package's own functions on the same predictions, the join by file name and its
errors (no annotated image, missing images, a label that disagrees), one model's records from
hand-made embeddings on stand-in images named as real ImageNet val files, and the factor-level
effective robustness across models (a known line)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image
from test_holistic_commands import write_classifier, write_embeddings

from vlstress import cli
from vlstress.errors import VlstressError
from vlstress.record import read_records
from vlstress.suites.visual_factors import factors, fit
from vlstress.testsets import manifest as testsets
from vlstress.testsets.labelmaps import imagenet_classnames, imagenet_wnids


@pytest.fixture(scope="module")
def table():
    return factors.load_table("top", True)


def test_error_ratio_known_answer():
    names = factors.factor_names()
    # 6 images, overall 3/6 correct; pose on images 0, 1, 2 (1 of 3 correct); color on 3 (correct)
    flags = np.zeros((6, 16), dtype=int)
    flags[[0, 1, 2], names.index("pose")] = 1
    flags[3, names.index("color")] = 1
    found = factors.factor_metrics(np.array([1, 0, 0, 1, 1, 0]), flags)
    assert found["all"] == {"top1": 50.0, "n_images": 6}
    assert found["pose"]["top1"] == pytest.approx(100 / 3)
    assert found["pose"]["error_ratio"] == pytest.approx((2 / 3) / 0.5)
    assert found["pose"]["share"] == 50.0
    assert found["color"]["error_ratio"] == 0.0
    assert found["texture"] == {"top1": None, "error_ratio": None, "n_images": 0, "share": 0.0}
    # a model right everywhere: no error to compare with
    assert factors.factor_metrics(np.ones(6), flags)["pose"]["error_ratio"] is None


def test_error_ratios_equal_imagenet_x_own_functions(table):
    from imagenet_x.aggregate import compute_factor_accuracies, error_ratio
    from imagenet_x.utils import FACTORS

    rng = np.random.default_rng(0)
    sample = table.sample(2000, random_state=0).reset_index(drop=True)
    predicted = np.where(rng.random(len(sample)) < 0.6, sample["class"], rng.integers(0, 1000))
    correct = predicted == sample["class"].to_numpy()
    ours = factors.factor_metrics(correct, sample[FACTORS].to_numpy())
    frame = sample.assign(model="m", is_correct=correct)
    theirs = compute_factor_accuracies(frame, FACTORS)
    ratios = error_ratio(theirs).loc["m"]
    assert ours["all"]["top1"] == pytest.approx(100 * theirs.loc["m", "average"])
    for factor in FACTORS:
        if ours[factor]["n_images"]:
            assert ours[factor]["top1"] == pytest.approx(100 * theirs.loc["m", factor])
            assert ours[factor]["error_ratio"] == pytest.approx(ratios[factor])


# ------------------------------------------------------------------ stand-in ImageNet val


def stand_in(root: Path, table, n: int = 24) -> pd.DataFrame:
    """Tiny JPEGs named as the first `n` annotated val files, in their wnid folders."""
    chosen = table.sort_values("file_name").head(n)
    wnids = imagenet_wnids()
    for i, (_, row) in enumerate(chosen.iterrows()):
        path = root / wnids[row["class"]] / row["file_name"]
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (8, 8), (i * 9 % 256, 40, 90)).save(path, format="JPEG")
    return chosen


def build_testset(tmp_path: Path, root: Path) -> Path:
    out = tmp_path / "testset"
    code = cli.main(
        [
            "testset",
            "--name",
            "imagenet",
            "--kind",
            "imagenet",
            "--root",
            str(root),
            "--out",
            str(out),
        ]
    )
    assert code == 0
    return out


def test_join_by_file_name_and_its_errors(tmp_path, table):
    chosen = stand_in(tmp_path / "val", table)
    data = testsets.load(build_testset(tmp_path, tmp_path / "val"))
    joined = factors.join(data, table, complete=False)
    assert sorted(joined.files) == sorted(chosen["file_name"])
    assert len(joined.missing) == len(table) - 24 and list(joined.rows) == sorted(joined.rows)
    with pytest.raises(VlstressError, match=r"lacks 4608\d of the 4611\d images"):
        factors.join(data, table, complete=True)
    # a label that disagrees with ImageNet-X names the file
    wrong = testsets.ClassificationSet(
        data.dataset, data.kind, data.classes, data.class_ids, data.root,
        [{**data.images[0], "label": (data.images[0]["label"] + 1) % 1000}, *data.images[1:]],
    )  # fmt: skip
    with pytest.raises(VlstressError, match=data.images[0]["path"] + ": labelled"):
        factors.join(wrong, table, complete=False)
    # no annotated image at all
    renamed = testsets.ClassificationSet(
        data.dataset, data.kind, data.classes, data.class_ids, data.root,
        [{**e, "path": e["path"].replace("ILSVRC2012_val", "photo")} for e in data.images],
    )  # fmt: skip
    with pytest.raises(VlstressError, match="none of its 24 images is annotated by ImageNet-X"):
        factors.join(renamed, table, complete=False)


def test_one_model_records_on_stand_in_images(tmp_path, table):
    chosen = stand_in(tmp_path / "val", table)
    folder = build_testset(tmp_path, tmp_path / "val")
    data = testsets.load(folder)
    # right on every image but the first 8 in file order
    wrong = set(chosen["file_name"][:8])
    predicted = [(e["label"] + (Path(e["path"]).name in wrong)) % 1000 for e in data.images]
    write_embeddings(tmp_path / "emb.npy", np.eye(1000)[predicted])
    write_classifier(tmp_path / "clf.npy", list(imagenet_classnames()), np.eye(1000))
    out = tmp_path / "records.json"
    code = cli.main(
        ["visual-factors", "--testset", str(folder), "--image-emb", str(tmp_path / "emb.npy"),
         "--classifier", str(tmp_path / "clf.npy"), "--complete", "false", "--out", str(out)]
    )  # fmt: skip
    assert code == 0
    records = {r.condition["factor"]: r.metrics for r in read_records(out)}
    assert list(records)[0] == "all" and len(records) == 17
    assert records["all"] == {"top1": pytest.approx(100 * 16 / 24), "n_images": 24}
    for factor in factors.factor_names():
        has = chosen[factor] == 1
        if has.any():
            accuracy = 1 - (has & chosen["file_name"].isin(list(wrong))).sum() / has.sum()
            assert records[factor]["error_ratio"] == pytest.approx((1 - accuracy) / (8 / 24))
    predictions = json.loads(Path(f"{out}.json").read_text())
    assert sorted(predictions["file_name"]) == sorted(chosen["file_name"])
    # one block of per-image outcomes per record; the statistic gives each error ratio back
    from vlstress.outcomes import outcomes_path, read_outcomes
    from vlstress.report.intervals import bootstrap_interval
    from vlstress.suites.visual_factors.resampling import error_ratio_resampling

    blocks = dict(zip(records, read_outcomes(outcomes_path(out))))
    assert blocks["all"].column("has").all() and blocks["all"].n == 24
    assert 100 * blocks["all"].column("correct").mean() == pytest.approx(records["all"]["top1"])
    shown = 0
    for factor in factors.factor_names():
        resampled = error_ratio_resampling(blocks[factor])
        value = resampled.statistic(*resampled.samples)
        if records[factor]["error_ratio"] is None:
            assert not np.isfinite(value)
            continue
        shown += 1
        assert value == pytest.approx(records[factor]["error_ratio"], rel=1e-12)
        assert blocks[factor].column("has").sum() == records[factor]["n_images"]
    assert shown >= 3
    # a BCa interval over the images brackets a ratio whose factor has errors and hits
    factor = max(
        (f for f in factors.factor_names() if records[f]["error_ratio"]),
        key=lambda f: records[f]["n_images"],
    )
    lo, hi, method = bootstrap_interval(error_ratio_resampling(blocks[factor]), 0.95, 500, 0)
    assert method == "BCa" and lo <= records[factor]["error_ratio"] <= hi
    # not an ImageNet test set: named
    small = testsets.ClassificationSet(
        "x", "imagefolder", ["a"], ["a"], str(tmp_path), [{**data.images[0], "label": 0}]
    )
    testsets.write(tmp_path / "other/manifest.json", small)
    with pytest.raises(VlstressError, match="visual factors need the 1000 ImageNet classes"):
        from vlstress.suites.visual_factors.run import evaluate

        evaluate(tmp_path / "other", tmp_path / "emb.npy", tmp_path / "clf.npy",
                 which="top", filter_prototypes=True, complete=False)  # fmt: skip


# ------------------------------------------------------------------ across models


def summary(overall: dict[str, float], pose: dict[str, float]) -> pd.DataFrame:
    """A long summary table (`vlstress summarize`'s columns) of visual-factor records."""
    from vlstress.report.records import RECORD_COLUMNS

    rows = []
    for model in overall:
        for factor, value in (("all", overall[model]), ("pose", pose[model])):
            ratio = (100 - value) / (100 - overall[model])
            for metric, v in (("top1", value), ("error_ratio", ratio)):
                cond = json.dumps({"factor": factor})
                rows.append(
                    {"model": model, "label": model, "arch": "x", "weights": "random-init",
                     "weights_kind": "random-init", "n_params": 1, "dataset": "imagenet",
                     "n_images": 10, "n_captions": 0, "task": "visual_factors", "condition": cond,
                     "condition_label": factor, "condition_json": cond, "seed": np.nan,
                     "metric": metric, "value": v}
                )  # fmt: skip
    return pd.DataFrame(rows, columns=RECORD_COLUMNS)


def test_factor_level_effective_robustness_known_line():
    # pose top-1 = 0.8 x overall - 5 for three models; the fourth is 10 points above the line
    overall = {"a": 40.0, "b": 60.0, "c": 80.0, "d": 70.0}
    pose = {m: 0.8 * v - 5 for m, v in overall.items()} | {"d": 0.8 * 70 - 5 + 10}
    from vlstress.report.records import aggregate

    table = fit.accuracies(aggregate(summary(overall, pose)))
    assert list(table.columns) == ["all", "pose"] and list(table.index) == ["a", "b", "c", "d"]
    (line,), notes = fit.fits(table, "linear")
    assert notes == [] and line.n_models == 4
    assert line.slope == pytest.approx(0.8, abs=0.02) and line.intercept == pytest.approx(
        -0.05, abs=0.02
    )
    assert line.residuals["d"] == pytest.approx(10.0, abs=0.5)
    assert all(abs(line.residuals[m]) < 0.5 for m in "abc")
    (short,), notes = fit.fits(table.loc[["a", "b"]], "linear")
    assert np.isnan(short.slope) and "fewer than 3 models" in notes[0]


def test_factor_robustness_command_writes_tables_and_figure(tmp_path):
    overall = {"ViT-B-32 (random-init)": 40.0, "RN50 (random-init)": 60.0, "ViT-L-14 (x)": 80.0}
    pose = {m: 0.5 * v for m, v in overall.items()}
    frame = summary(overall, pose)
    frame.to_csv(tmp_path / "summary.csv", index=False)
    names = {"md": "t.md", "tex": "t.tex", "json": "f.json", "scores": "s", "fig": "v.png"}
    outs = {key: tmp_path / name for key, name in names.items()}
    argv = ["factor-robustness", "--summary", str(tmp_path / "summary.csv")]
    for key, path in outs.items():
        argv += [f"--out-{key}", str(path)]
    assert cli.main(argv) == 0
    markdown = outs["md"].read_text()
    assert "error ratio" in markdown and "| ViT-L-14 (x)" in markdown and "pose" in markdown
    fits = json.loads(outs["json"].read_text())["fits"]
    assert fits[0]["factor"] == "pose" and fits[0]["slope"] == pytest.approx(0.5, abs=0.02)
    assert json.loads((outs["scores"] / "visual_factors/pose.json").read_text())["n_models"] == 3
    assert outs["fig"].is_file() and outs["fig"].with_suffix(".pdf").is_file()


def test_the_error_ratio_statistic_batches_resamples():
    """The vectorised statistic equals the ratio computed resample by resample, and is NaN where a
    resample has no image with the factor or no error at all."""
    from vlstress.suites.visual_factors.resampling import error_ratio_batch

    rng = np.random.default_rng(0)
    correct = rng.random((5, 40)) < 0.7
    has = rng.random((5, 40)) < 0.3
    batched = error_ratio_batch(correct, has)
    for row in range(5):
        c, h = correct[row], has[row]
        assert batched[row] == pytest.approx((1 - c[h].mean()) / (1 - c.mean()))
    assert np.isnan(error_ratio_batch(np.array([True, False]), np.array([False, False])))
    assert np.isnan(error_ratio_batch(np.array([True, True]), np.array([True, False])))
    # items on another axis
    assert error_ratio_batch(correct.T, has.T, axis=0) == pytest.approx(batched)
