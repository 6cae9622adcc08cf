"""Zero-shot classification: templates, the classifier, metrics (known answers, scikit-learn
agreement), the record."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score, top_k_accuracy_score

from vlstress.errors import VlstressError
from vlstress.io import sidecar, write_json, write_npy
from vlstress.outcomes import outcomes_path, read_outcomes
from vlstress.record import read_record
from vlstress.suites.zeroshot import metrics, templates
from vlstress.testsets import manifest as testsets
from vlstress.testsets.lists import load_names

from conftest import finetune_off, zeroshot_off

# ----------------------------------------------------------------------------- templates


def test_template_registry_has_the_published_sets():
    openai, _ = templates.resolve("openai")
    simple, _ = templates.resolve("simple")
    single, _ = templates.resolve("single")
    assert len(openai) == 80 and len(simple) == 7 and single == ["a photo of a {c}."]
    assert all("{c}" in t for t in openai + simple)
    assert templates.prompts(simple, "dog")[0] == "itap of a dog."


def test_template_and_classname_files_in_clip_benchmark_format(tmp_path):
    keyed = tmp_path / "templates.json"
    keyed.write_text(
        json.dumps(
            {"cifar10": ["a photo of a {c}.", "a blurry photo of a {c}."], "mnist": ["a digit {c}"]}
        )
    )
    assert templates.resolve(f"{keyed}#cifar10")[0] == [
        "a photo of a {c}.",
        "a blurry photo of a {c}.",
    ]
    with pytest.raises(VlstressError, match="add #KEY"):
        templates.resolve(str(keyed))
    with pytest.raises(VlstressError, match="no key 'svhn'"):
        templates.resolve(f"{keyed}#svhn")
    lines = tmp_path / "t.txt"
    lines.write_text("a {c}\n\nan image of {c}\n")
    assert templates.resolve(str(lines))[0] == ["a {c}", "an image of {c}"]
    bad = tmp_path / "bad.txt"
    bad.write_text("no placeholder here\n")
    with pytest.raises(VlstressError, match="without the \\{c\\} placeholder"):
        templates.resolve(str(bad))
    with pytest.raises(VlstressError, match="unknown template set 'opneai'"):
        templates.resolve("opneai")
    names = tmp_path / "classnames.json"
    names.write_text(json.dumps({"cifar10": ["airplane", "automobile"]}))
    assert load_names(f"{names}#cifar10") == ["airplane", "automobile"]


# ----------------------------------------------------------------------------- metrics


def test_metrics_known_answer():
    # 4 images, 3 classes; image 3 has its true class second
    scores = np.array([[0.9, 0.1, 0.0], [0.2, 0.7, 0.1], [0.3, 0.2, 0.5], [0.6, 0.4, 0.0]])
    labels = [0, 1, 2, 1]
    values, per_class = metrics.classification_metrics(scores, labels, ks=(1, 2, 5))
    assert values["top1"] == 75.0 and values["top2"] == 100.0
    assert values["top5"] is None  # k > number of classes: undefined, not 100
    assert per_class == [100.0, 50.0, 100.0]
    assert values["mean_per_class_recall"] == pytest.approx(250 / 3)


def test_ties_count_for_the_true_class():
    scores = np.array([[0.5, 0.5], [0.5, 0.5]])
    values, _ = metrics.classification_metrics(scores, [0, 1], ks=(1,))
    assert values["top1"] == 100.0


def test_attack_success_and_shift_metrics():
    scores = np.array([[0.1, 0.9, 0.0], [0.8, 0.1, 0.1], [0.0, 0.2, 0.8]])
    values, _ = metrics.classification_metrics(scores, [0, 0, 1], ks=(1,), written=[1, 2, 2])
    # images 0 and 2 follow the written name
    assert values["attack_success"] == pytest.approx(200 / 3)
    assert metrics.shift_metrics(40.0, 80.0) == {
        "top1_clean": 80.0,
        "drop": 40.0,
        "relative_drop": 50.0,
    }
    assert metrics.shift_metrics(40.0, None)["drop"] is None


def test_metrics_agree_with_scikit_learn():
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(500, 20))
    labels = rng.integers(0, 20, size=500)
    values, _ = metrics.classification_metrics(scores, labels, ks=(1, 5))
    assert values["top1"] == pytest.approx(
        100 * top_k_accuracy_score(labels, scores, k=1, labels=range(20))
    )
    assert values["top5"] == pytest.approx(
        100 * top_k_accuracy_score(labels, scores, k=5, labels=range(20))
    )
    assert values["mean_per_class_recall"] == pytest.approx(
        100 * balanced_accuracy_score(labels, scores.argmax(1))
    )


def test_bad_labels_are_errors():
    with pytest.raises(VlstressError, match="labels outside"):
        metrics.classification_metrics(np.zeros((2, 3)), [0, 3])


# ----------------------------------------------------------------------------- classifier


def test_classifier_rows_are_mean_normalised_prompt_embeddings(tiny_arch):
    import torch

    from vlstress.embedding import models
    from vlstress.suites.zeroshot.classifier import build

    spec = models.ModelSpec(slug="tiny", arch=tiny_arch, pretrained=None, seed=0)
    model, _, tokenizer = models.load(spec, "cpu", threads=1)
    names = ["dog", "cat", "traffic light"]
    tmpl = ["a photo of a {c}.", "a drawing of a {c}."]
    weights = build(model, tokenizer, names, tmpl, device="cpu", batch_size=2)
    assert weights.shape == (3, model.text_projection.shape[1]) and weights.dtype == np.float32
    with torch.no_grad():
        for row, name in zip(weights, names):
            emb = model.encode_text(tokenizer(templates.prompts(tmpl, name)), normalize=True).mean(
                0
            )
            np.testing.assert_allclose(row, (emb / emb.norm()).numpy(), atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(weights, axis=1), 1.0, atol=1e-5)


# ----------------------------------------------------------------------------- evaluate-zeroshot


def _run(module, argv):
    parser = argparse.ArgumentParser()
    module.add_arguments(parser)
    module.run(parser.parse_args(argv))


def _fixture_set(tmp_path, written=None, severity=None):
    images = []
    labels = [0, 0, 1, 1, 2, 2]
    for i, label in enumerate(labels):
        entry = {"path": f"{i}.png", "label": label}
        if written is not None:
            entry["written"] = written[i]
        if severity is not None:
            entry["severity"] = severity[i]
        images.append(entry)
    data = testsets.ClassificationSet(
        "toy", "imagefolder", ["a", "b", "c"], ["a", "b", "c"], str(tmp_path), images
    )
    folder = tmp_path / "set"
    testsets.write(folder / "manifest.json", data)
    return folder


def _embeddings(tmp_path, rows, name):
    model = {"slug": "m", "arch": "X", "weights_label": "random-init (seed 0)"}
    path = tmp_path / f"{name}.npy"
    write_npy(path, np.asarray(rows, dtype=np.float32))
    meta = {"provenance": {"model": model, "seed": 0, "device": "cpu"}}
    return path, meta


def test_evaluate_zeroshot_writes_a_record_and_per_class_sidecar(tmp_path):
    from vlstress.suites.zeroshot.commands import evaluate_zeroshot

    folder = _fixture_set(tmp_path)
    eye = np.eye(3)
    emb, meta = _embeddings(tmp_path, [eye[0], eye[0], eye[1], eye[0], eye[2], eye[2]], "emb")
    write_json(sidecar(emb), meta)
    clf, clf_meta = _embeddings(tmp_path, eye, "clf")
    write_json(sidecar(clf), {**clf_meta, "classes": ["a", "b", "c"], "templates_source": "single"})
    out = tmp_path / "rec.json"
    _run(
        evaluate_zeroshot,
        [
            "--testset",
            str(folder),
            "--image-emb",
            str(emb),
            "--classifier",
            str(clf),
            "--out",
            str(out),
        ],
    )
    record = read_record(out)
    assert record.task == "zeroshot" and record.condition == {}
    assert record.metrics["top1"] == pytest.approx(500 / 6)
    assert record.metrics["mean_per_class_recall"] == pytest.approx(500 / 6)
    assert record.metrics["top5"] is None
    per_class = json.loads(sidecar(out).read_text())
    assert per_class["top1"] == [100.0, 50.0, 100.0] and per_class["n_images"] == [2, 2, 2]
    # the outcomes file: each image's outcome in the test set's order (image 3, truth b, says a)
    (items,) = read_outcomes(outcomes_path(out))
    assert items.unit == "image"
    assert items.column("correct").tolist() == [True, True, True, False, True, True]
    assert items.column("prediction").tolist() == [0, 0, 1, 0, 2, 2]
    assert items.column("truth_rank").tolist() == [1, 1, 1, 2, 1, 1]

    # a typographic set: attack success against the written class, drop against the clean record
    attacked = _fixture_set(tmp_path / "t", written=[1, 1, 0, 0, 0, 0])
    out_t = tmp_path / "typo.json"
    _run(
        evaluate_zeroshot,
        [
            "--task",
            "typographic",
            "--testset",
            str(attacked),
            "--image-emb",
            str(emb),
            "--classifier",
            str(clf),
            "--clean-record",
            str(out),
            "--out",
            str(out_t),
        ],
    )
    typo = read_record(out_t)
    assert typo.condition == {"attack": "typographic"}
    assert typo.metrics["attack_success"] == pytest.approx(100 / 6)  # image 3 predicted a = written
    assert typo.metrics["drop"] == pytest.approx(0.0)
    (typo_items,) = read_outcomes(outcomes_path(out_t))
    assert 100 * typo_items.column("written_hit").mean() == pytest.approx(100 / 6)

    # a corrupted set: one severity selected
    corrupted = _fixture_set(tmp_path / "c", severity=[1, 3, 1, 3, 1, 3])
    out_c = tmp_path / "c.json"
    _run(
        evaluate_zeroshot,
        [
            "--task",
            "corruption",
            "--corruption",
            "fog",
            "--severity",
            "3",
            "--testset",
            str(corrupted),
            "--image-emb",
            str(emb),
            "--classifier",
            str(clf),
            "--clean-record",
            str(out),
            "--out",
            str(out_c),
        ],
    )
    rec_c = read_record(out_c)
    assert (
        rec_c.condition == {"corruption": "fog", "severity": 3} and rec_c.dataset["n_images"] == 3
    )
    assert rec_c.metrics["top1"] == pytest.approx(200 / 3)  # rows 1, 3, 5: a, a (wrong: b), c


def test_classifier_of_other_classes_is_refused(tmp_path):
    from vlstress.suites.zeroshot.commands import evaluate_zeroshot

    folder = _fixture_set(tmp_path)
    emb, meta = _embeddings(tmp_path, np.eye(3)[[0, 0, 1, 1, 2, 2]], "emb")
    write_json(sidecar(emb), meta)
    clf, clf_meta = _embeddings(tmp_path, np.eye(3), "clf")
    write_json(sidecar(clf), {**clf_meta, "classes": ["a", "b", "x"]})
    out = tmp_path / "rec.json"
    with pytest.raises(VlstressError, match="other class names"):
        _run(
            evaluate_zeroshot,
            [
                "--testset",
                str(folder),
                "--image-emb",
                str(emb),
                "--classifier",
                str(clf),
                "--out",
                str(out),
            ],
        )
    assert not out.exists()


# ----------------------------------------------------------------------------- params


def test_zeroshot_params_are_checked_against_registries_while_on():
    import copy

    import yaml

    from vlstress import params_check as checks

    from conftest import REPO

    base = yaml.safe_load((REPO / "params.yaml").read_text())
    assert checks.problems(base) == []
    bad = copy.deepcopy(base)
    bad["corruptions"]["names"] = ["fgo"]
    bad["zeroshot"]["testsets"]["objects"]["kind"] = "imagenet-x"
    bad["typographic"]["testset"] = "objcts"
    found = "\n".join(checks.problems(bad))
    assert "unknown corruption 'fgo' (did you mean 'fog'?)" in found
    assert (
        "unknown test-set kind 'imagenet-x'" in found
        and "typographic.testset: unknown test set 'objcts'" in found
    )
    other_models = copy.deepcopy(base)
    other_models["models"] = {"x": {"arch": "RN50", "pretrained": None}}
    finetune_off(other_models)
    unknown = "mce_baseline: unknown model 'vit-s-32-alt-random'"
    assert any(unknown in p for p in checks.problems(other_models))
    zeroshot_off(other_models)
    assert checks.problems(other_models) == []  # a suite that is off is not checked
    alone = copy.deepcopy(base)
    alone["suites"]["zeroshot"] = False
    assert "suites.corruptions is on but needs suite(s) zeroshot on too" in checks.problems(alone)
