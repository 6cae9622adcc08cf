"""mCE and relative mCE against AlexNet's published ImageNet-C errors (Hendrycks & Dietterich 2019):
the shipped values are the source's, known answers, and corruptions of another set give the reason
instead of a number."""

from __future__ import annotations

import argparse
import hashlib
from importlib import resources

import pandas as pd
import pytest

from vlstress.suites.zeroshot.corruption_error import (
    ALEXNET_FILE,
    IMAGENET_C,
    SEVERITIES,
    alexnet_errors,
    corruption_table,
)
from vlstress.suites.zeroshot.robustness_tables import markdown

# sha256 of the shipped file, as recorded in vlstress/data/published/SOURCES.md
SHIPPED_SHA256 = "0b97aa33dc948354d4215ddba71482c725e6ac266efae589cbc7efb4c2fd4ff5"
# google-research/augmix imagenet.py (commit 9b9824c7), CORRUPTIONS and ALEXNET_ERR, in order
AUGMIX_ORDER = (
    "gaussian_noise shot_noise impulse_noise defocus_blur glass_blur motion_blur zoom_blur snow "
    "frost fog brightness contrast elastic_transform pixelate jpeg_compression"
).split()


def _shipped_bytes() -> bytes:
    return resources.files("vlstress").joinpath(ALEXNET_FILE).read_bytes()


def test_the_shipped_alexnet_errors_are_the_sources():
    assert hashlib.sha256(_shipped_bytes()).hexdigest() == SHIPPED_SHA256
    sources = resources.files("vlstress").joinpath("data/published/SOURCES.md").read_text()
    assert SHIPPED_SHA256 in sources
    errors = alexnet_errors()
    assert list(errors) == ["clean", *AUGMIX_ORDER] and tuple(AUGMIX_ORDER) == IMAGENET_C
    assert errors["gaussian_noise"] == 0.886428
    assert errors["brightness"] == 0.564592
    assert errors["jpeg_compression"] == 0.6065
    assert errors["clean"] == pytest.approx(1 - 0.56522)  # torchvision's AlexNet acc@1 56.522


def _top1(errors_of: dict[str, dict[str, float]], images: str = "imagenet", severities=SEVERITIES):
    """Rows (model, corruption, severity, top1, images): every severity at the given error (%)."""
    rows = [
        (model, corruption, severity, 100.0 - error, images)
        for model, errors in errors_of.items()
        for corruption, error in errors.items()
        for severity in severities
    ]
    return pd.DataFrame(rows, columns=["model", "corruption", "severity", "top1", "images"])


def test_a_model_with_alexnets_errors_scores_100():
    alex = alexnet_errors()
    top1 = _top1({"twin": {c: 100 * alex[c] for c in IMAGENET_C}})
    clean = {"twin": 100 * (1 - alex["clean"])}
    row = corruption_table(top1, clean, None).set_index("model").loc["twin"]
    assert row["alexnet_note"] is None
    assert row["mCE_alexnet"] == pytest.approx(100.0)
    assert row["relative_mCE_alexnet"] == pytest.approx(100.0)


def test_alexnet_mce_known_answer():
    alex = alexnet_errors()
    # half AlexNet's error on the first 5 corruptions, as much on the other 10: mCE = (5*50 +
    # 10*100) / 15; clean error 20%, and the drop from clean half AlexNet's drop everywhere
    half = {c: (0.5 if i < 5 else 1.0) * 100 * alex[c] for i, c in enumerate(IMAGENET_C)}
    drop = {c: 20.0 + 0.5 * 100 * (alex[c] - alex["clean"]) for c in IMAGENET_C}
    top1 = _top1({"half": half, "drop": drop})
    table = corruption_table(top1, {"half": 70.0, "drop": 80.0}, None).set_index("model")
    assert table.loc["half", "mCE_alexnet"] == pytest.approx((5 * 50 + 10 * 100) / 15)
    assert table.loc["drop", "relative_mCE_alexnet"] == pytest.approx(50.0)
    # CE is the mean over severities: errors 10 and 30 at gaussian_noise average to 20
    one = _top1({"m": {c: 100 * alex[c] for c in IMAGENET_C}})
    noise = one["corruption"] == "gaussian_noise"
    one.loc[noise, "top1"] = [90.0, 70.0, 80.0, 80.0, 80.0]
    got = corruption_table(one, {}, None).set_index("model").loc["m"]
    assert got["mCE_alexnet"] == pytest.approx(
        (14 * 100 + 100 * 20 / (100 * alex["gaussian_noise"])) / 15
    )
    assert got["relative_mCE_alexnet"] is None  # no clean top-1


def test_corruptions_of_another_set_give_the_reason_not_a_number():
    alex = alexnet_errors()
    full = {c: 100 * alex[c] for c in IMAGENET_C}
    demo = corruption_table(_top1({"m": full}, images="demo-objects"), {"m": 50.0}, None)
    assert demo.loc[0, "mCE_alexnet"] is None and demo.loc[0, "relative_mCE_alexnet"] is None
    assert demo.loc[0, "alexnet_note"].startswith("not comparable: corruptions of a demo-objects")
    two = _top1({"m": {"gaussian_noise": 50.0, "fog": 40.0}}, severities=(1, 5))
    note = corruption_table(two, {"m": 50.0}, None).loc[0, "alexnet_note"]
    assert "2 of the 15 ImageNet-C corruptions" in note and "shot_noise" in note
    assert "fog at 1, 5" in note
    unsaid = _top1({"m": full}).drop(columns="images")
    note = corruption_table(unsaid, {"m": 50.0}, None).loc[0, "alexnet_note"]
    assert note == "not comparable: the records do not say which images were corrupted"
    released = corruption_table(_top1({"m": full}, images="imagenet-c"), {"m": 50.0}, None)
    assert released.loc[0, "alexnet_note"] is None


def test_the_markdown_table_shows_the_alexnet_columns_or_why_not():
    alex = alexnet_errors()
    full = {c: 100 * alex[c] for c in IMAGENET_C}
    effective = pd.DataFrame(columns=["model", "shift"])
    for images, expected in (("imagenet", "100.0"), ("demo-objects", "not comparable")):
        top1 = _top1({"m": full, "base": full}, images=images)
        clean = {"m": 100 * (1 - alex["clean"]), "base": 60.0}
        table = corruption_table(top1, clean, "base")
        text = markdown(table, top1, "base", effective, "imagenet", None, {})
        assert "mCE (AlexNet)" in text and "relative mCE (AlexNet)" in text
        line = next(row for row in text.splitlines() if row.startswith("| m "))
        assert expected in line
        assert ("against AlexNet's published errors not comparable" in text) == (
            images == "demo-objects"
        )


# ------------------------------------------------------------------ ImageNet-P (stability)


def _stability_summary(tmp_path, images: str | None, perturbations, fp: float = 4.0):
    from vlstress.record import write_records
    from vlstress.report import records

    from report_fixtures import record

    path = tmp_path / "metrics" / "vit-b-32-random" / "stability.json"
    condition = {"set": "val", "difficulty": 1, **({"images": images} if images else {})}
    write_records(
        path,
        [
            record(
                "vit-b-32-random",
                "stability",
                {**condition, "perturbation": name},
                {"flip_probability": fp, "top5_distance": fp / 10},
            )
            for name in perturbations
        ],
    )
    return records.collect([path])


def test_stability_comparability_names_the_reason():
    from vlstress.suites.stability import published
    from vlstress.suites.stability.perturbations import TEST

    assert len(TEST) == 10
    every = list(TEST)
    reason = published.comparability(every, ["demo-objects"] * 10, [1], None)
    assert reason.startswith("not comparable: sequences of a demo-objects set")
    reason = published.comparability(["rotate"], ["imagenet"], [1], None)
    assert "1 of the 10 ImageNet-P test perturbations" in reason and "gaussian_noise" in reason
    assert "do not say" in published.comparability(every, [None] * 10, [1], None)
    # comparable, but nothing shipped: said so, no number
    assert published.alexnet_values() is None
    assert published.comparability(every, ["imagenet"] * 10, [1], None) == published.NOT_SHIPPED
    text = "perturbation,difficulty,flip_probability,top5_distance\n" + "".join(
        f"{p},1,8.0,2.0\n" for p in TEST
    )
    values = published.alexnet_values(text)
    assert published.comparability(every, ["imagenet"] * 10, [1], values) is None
    assert "no difficulty 2" in published.comparability(every, ["imagenet"] * 10, [2], values)
    per = {p: 4.0 for p in TEST}
    assert published.alexnet_relative(per, 1, values, 0) == pytest.approx(50.0)
    assert published.alexnet_relative(per, 1, values, 1) == pytest.approx(200.0)


def test_the_stability_table_shows_alexnet_columns_or_why_not(tmp_path, monkeypatch):
    from vlstress.suites.stability import published, table
    from vlstress.suites.stability.perturbations import TEST

    summary = _stability_summary(tmp_path / "demo", "demo-objects", TEST)
    markdown, _, notes = table.render(summary, {}, None)
    assert "mFR vs AlexNet (%)" in markdown and "not comparable" in markdown
    assert any("sequences of a demo-objects set" in n for n in notes)
    summary = _stability_summary(tmp_path / "val", "imagenet", TEST)
    markdown, _, notes = table.render(summary, {}, None)
    assert "not shipped" in markdown and any(published.NOT_SHIPPED in n for n in notes)
    # with AlexNet's values at twice the model's FP and T5D: mFR 50 %, relative mT5D 50 %
    text = "perturbation,difficulty,flip_probability,top5_distance\n" + "".join(
        f"{p},1,8.0,0.8\n" for p in TEST
    )
    real = published.alexnet_values
    monkeypatch.setattr(published, "alexnet_values", lambda: real(text))
    markdown, _, notes = table.render(summary, {}, None)
    row = next(line for line in markdown.splitlines() if "ViT-B-32" in line)
    assert row.count("50.0") >= 1 and not any("AlexNet columns" in n for n in notes)


# ------------------------------------------------------------------ the released ImageNet-C


def _released_project(tmp_path):
    from PIL import Image

    from vlstress.testsets import labelmaps
    from vlstress.testsets import manifest as testsets

    wnids = labelmaps.imagenet_wnids()
    names = [f"class {i}" for i in range(len(wnids))]  # (the real names import open_clip)
    files = [f"{wnids[0]}/ILSVRC2012_val_0000000{i}.JPEG" for i in (1, 2)]
    for path in files:
        (tmp_path / "val" / path).parent.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (8, 8)).save(tmp_path / "val" / path)
        for severity in (1, 5):
            target = tmp_path / "ImageNet-C" / "fog" / str(severity) / path
            target.parent.mkdir(parents=True, exist_ok=True)
            Image.new("RGB", (8, 8), (severity, 0, 0)).save(target)
    images = [{"path": path, "label": 0} for path in files]
    clean = testsets.ClassificationSet(
        "val", "imagenet", names, list(wnids), str(tmp_path / "val"), images
    )
    testsets.write(tmp_path / "testset" / "manifest.json", clean)
    return clean, files


def test_the_corruptions_suite_reads_the_released_imagenet_c(tmp_path):
    from vlstress.suites.corruptions.commands import corrupt
    from vlstress.testsets import manifest as testsets

    clean, files = _released_project(tmp_path)
    parser = argparse.ArgumentParser()
    corrupt.add_arguments(parser)
    args = ["--manifest", str(tmp_path / "testset"), "--corruption", "fog", "--severities", "1,5"]
    released = [
        "--seed",
        "0",
        "--source",
        str(tmp_path / "ImageNet-C"),
        "--out",
        str(tmp_path / "c"),
    ]
    corrupt.run(parser.parse_args([*args, *released]))
    data = testsets.load(tmp_path / "c")
    assert data.root == str(tmp_path / "ImageNet-C" / "fog")
    assert [(e["path"], e["severity"]) for e in data.images] == [
        (f"1/{files[0]}", 1),
        (f"1/{files[1]}", 1),
        (f"5/{files[0]}", 5),
        (f"5/{files[1]}", 5),
    ]
    assert data.source["released"] == str(tmp_path / "ImageNet-C") and data.kind == "corruption"
    assert not list((tmp_path / "c").glob("s*"))  # nothing corrupted, the files read in place


def test_released_imagenet_c_refuses_missing_files_and_other_sets(tmp_path):
    from vlstress.errors import VlstressError
    from vlstress.suites.corruptions import imagenet_c
    from vlstress.suites.corruptions.paths import images

    clean, files = _released_project(tmp_path)
    (tmp_path / "ImageNet-C" / "fog" / "5" / files[1]).unlink()
    with pytest.raises(VlstressError, match=f"1 of 4 files of val are missing: 5/{files[1]}"):
        imagenet_c.read_released(clean, "fog", [1, 5], tmp_path / "ImageNet-C", tmp_path / "o")
    assert not (tmp_path / "o").exists()
    clean.kind = "demo-objects"
    with pytest.raises(VlstressError, match="of kind demo-objects, not ImageNet val"):
        imagenet_c.read_released(clean, "fog", [1], tmp_path / "ImageNet-C", tmp_path / "o")
    # what the corruption records say was corrupted
    assert images("generate", "imagenet") == "imagenet"
    assert images(str(tmp_path / "ImageNet-C"), "imagenet") == "imagenet-c"
    # generated at another size than ImageNet-C's 224: said, and so not comparable with AlexNet
    assert images("generate", "imagenet", 160) == "imagenet at 160 px"
    assert images("generate", "imagenet", 0) == "imagenet at original size"
    alex = alexnet_errors()
    full = {c: 100 * alex[c] for c in IMAGENET_C}
    table = corruption_table(_top1({"m": full}, images="imagenet at 160 px"), {"m": 50.0}, None)
    assert table.loc[0, "mCE_alexnet"] is None
    assert "corruptions of a imagenet at 160 px set" in table.loc[0, "alexnet_note"]


def test_the_params_check_wants_imagenet_val_for_the_released_files():
    import yaml

    from vlstress.suites.corruptions.params import problems

    from conftest import REPO

    params = yaml.safe_load((REPO / "params.yaml").read_text())
    on = frozenset({"zeroshot", "corruptions"})
    assert problems(params, on) == []
    params["corruptions"]["source"] = "/data/ImageNet-C"
    (found,) = problems(params, on)
    assert "corruptions.source" in found and "not imagenet" in found


def test_corruption_records_say_which_images_were_corrupted(tmp_path, monkeypatch):
    """The clean record's kind becomes the corruption records' `images` (the released files:
    `imagenet-c`), which decides whether the AlexNet columns are numbers."""
    from dataclasses import replace

    import yaml

    from vlstress.record import read_record, write_record
    from vlstress.suites.corruptions.commands import evaluate_corruptions

    from report_fixtures import record
    from test_corruptions import _corruption_project

    monkeypatch.chdir(tmp_path)
    params, _ = _corruption_project(tmp_path)
    clean = record("vit-b-32-random", "zeroshot", {}, {"top1": 50.0})
    write_record(
        tmp_path / "clean.json", replace(clean, dataset={"name": "val", "kind": "imagenet"})
    )
    for source, expected in (("generate", "imagenet"), ("/data/ImageNet-C", "imagenet-c")):
        content = yaml.safe_load(params.read_text())
        content["corruptions"]["source"] = source
        params.write_text(yaml.safe_dump(content))
        parser = argparse.ArgumentParser()
        evaluate_corruptions.add_arguments(parser)
        argv = ["--params", str(params), "--model", "m", "--out-dir", "out"]
        evaluate_corruptions.run(parser.parse_args([*argv, "--clean-record", "clean.json"]))
        got = read_record(tmp_path / "out" / "corruption-fog-s1.json")
        assert got.condition == {"corruption": "fog", "severity": 1, "images": expected}


def test_stability_records_say_which_set_the_frames_come_from(tmp_path, monkeypatch):
    import numpy as np
    import yaml
    from test_stability import _meta, _scores

    from vlstress.io import sidecar, write_json, write_npy
    from vlstress.record import read_records
    from vlstress.suites.stability.commands import evaluate_stability
    from vlstress.testsets import manifest as testsets

    from conftest import REPO

    monkeypatch.chdir(tmp_path)
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    params["stability"].update(perturbations=["rotate"], difficulty=1)
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    classes = list("abcdef")
    clf = tmp_path / f"results/embeddings/m/classifiers/{params['stability']['testset']}.npy"
    write_npy(clf, np.eye(6, dtype=np.float32))
    write_json(sidecar(clf), {**_meta(), "classes": classes, "templates_source": "single"})
    folder = tmp_path / "data" / "stability" / "rotate"
    images = [{"path": f"0/{f}.png", "label": 0, "sequence": 0, "frame": f} for f in range(2)]
    testsets.write(
        folder / "manifest.json",
        testsets.ClassificationSet(
            "val-p-rotate",
            "perturbation-sequences",
            classes,
            classes,
            str(folder),
            images,
            source={"clean_dataset": "val", "clean_kind": "imagenet"},
        ),
    )
    emb = tmp_path / "results/embeddings/m/zeroshot/stability/rotate.npy"
    write_npy(emb, np.stack([_scores([0, 1, 2, 3, 4, 5])] * 2))
    write_json(sidecar(emb), _meta())
    parser = argparse.ArgumentParser()
    evaluate_stability.add_arguments(parser)
    evaluate_stability.run(
        parser.parse_args(["--params", "params.yaml", "--model", "m", "--out", "out.json"])
    )
    (found,) = read_records(tmp_path / "out.json")
    assert found.condition["images"] == "imagenet"
