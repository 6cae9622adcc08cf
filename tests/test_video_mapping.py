"""A supervised ImageNet classifier's 1000 logits onto a video set's classes: imagenet-testbed's
max over each class's ImageNet logits (a transcription of its projection is the reference), the
mean probability where that is the documented rule, and the rule recorded."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest

from vlstress.suites.zeroshot import classifier
from vlstress.testsets import imagenet_map
from vlstress.testsets.manifest import ClassificationSet


def _testbed_projection(logits, rev_class_idx_map: dict, n_classes: int, fill: float):
    """imagenet-testbed's `project_imagenet_predictions_*` with merge_op='max' (commit 0170eec:
    src/eval_settings/imagenet_vid_robust.py lines 25-39, fill 0; ytbb_robust.py lines 449-465,
    fill -inf), after model_base.py line 44 restricts the logits to the eval setting's
    class_sublist (the sorted ImageNet indices of class_idx_map.json)."""
    class_idx_list = sorted({i for v in rev_class_idx_map.values() for i in v})
    preds = np.asarray(logits)[:, class_idx_list]  # x.t()[class_sublist].t()
    new_preds = np.ones((preds.shape[0], n_classes)) * fill
    for k, v in rev_class_idx_map.items():
        v = list(map(lambda x: class_idx_list.index(x), v))
        new_preds[:, int(k)] = np.max(preds[:, v], axis=1).squeeze()
    return new_preds


# class 0 has three ImageNet classes, one high and two low; class 1 one middling ImageNet class
REV_MAP = {"0": [4, 9, 7], "1": [2]}
LOGITS = np.full((1, 1000), -20.0)
LOGITS[0, [4, 9, 7, 2]] = [4.0, -5.0, -5.0, 3.5]


def _video_set(kind: str, rev_map: dict, n_classes: int) -> ClassificationSet:
    classes = [f"c{i}" for i in range(n_classes)]
    data = ClassificationSet("vid", kind, classes, [str(i) for i in range(n_classes)], "/x", [])
    data.source = {"imagenet_indices": rev_map}
    return data


def _scores(data: ClassificationSet, logits=LOGITS):
    weights = classifier.class_map(data, None)
    meta = {"scores": classifier.CLASS_MAP, "class_map_rule": classifier.class_map_rule(data, None)}
    return classifier.scores(logits, weights, meta), weights, meta


def test_video_sets_take_the_testbeds_max_logit():
    data = _video_set("imagenet-vid-robust", REV_MAP, 2)
    got, weights, meta = _scores(data)
    assert meta["class_map_rule"] == "max-logit"
    expected = _testbed_projection(LOGITS, REV_MAP, 2, fill=0.0)
    np.testing.assert_allclose(got, expected)
    assert got.argmax(axis=1).tolist() == [0]  # class 0's best ImageNet logit, 4, beats 3.5
    # the mean probability would pick class 1: log((e^4 + 2 e^-5) / 3) = 2.90 < 3.5
    mean = classifier.scores(LOGITS, weights, {"scores": classifier.CLASS_MAP})
    assert mean.argmax(axis=1).tolist() == [1]
    assert mean[0, 0] == pytest.approx(np.log((np.exp(4) + 2 * np.exp(-5)) / 3))


def _testbed_objectnet_correct(logits, folder_to_ids: dict, folder: str) -> bool:
    """imagenet-testbed's `objectnet_accuracy` (commit 0170eec, src/eval_settings/objectnet.py):
    the logits restricted to class_sublist (every mapped ImageNet index, in map order), argmax,
    right when it is one of the image's folder's ImageNet classes."""
    class_sublist = [i for ids in folder_to_ids.values() for i in ids]
    pred = int(np.asarray(logits)[0, class_sublist].argmax())
    return pred in [class_sublist.index(x) for x in folder_to_ids[folder]]


def test_objectnet_takes_the_testbeds_max_logit():
    """A timm model on ObjectNet as imagenet-testbed scored its table: the image is right when its
    class holds the best logit among the 113 classes' ImageNet classes (not their mean)."""
    folders = {"chair": [4, 9, 7], "mug": [2]}
    data = _video_set("objectnet", {"0": [4, 9, 7], "1": [2]}, 2)
    got, _, meta = _scores(data)
    assert meta["class_map_rule"] == "max-logit"
    assert got.argmax(axis=1).tolist() == [0]
    assert _testbed_objectnet_correct(LOGITS, folders, "chair")
    assert not _testbed_objectnet_correct(LOGITS, folders, "mug")
    rng = np.random.default_rng(1)
    for _ in range(20):  # random logits: the same verdict as the testbed's, image by image
        logits = rng.normal(size=(1, 1000))
        got, _, _ = _scores(data, logits)
        truth = int(rng.integers(2))
        folder = ["chair", "mug"][truth]
        assert (got.argmax() == truth) == _testbed_objectnet_correct(logits, folders, folder)


def test_a_ytbb_class_without_imagenet_classes_is_never_predicted():
    rev_map = {"0": [4, 9, 7], "2": [2]}  # class 1 (as YTBB's `none`) has no ImageNet classes
    data = _video_set("ytbb-robust", rev_map, 3)
    got, _, _ = _scores(data)
    np.testing.assert_allclose(got, _testbed_projection(LOGITS, rev_map, 3, fill=-np.inf))
    assert got[0, 1] == -np.inf
    # elsewhere an unmapped class is still refused, naming it
    other = _video_set("imagefolder", rev_map, 3)
    with pytest.raises(Exception, match="no ImageNet-1k classes for c1"):
        classifier.class_map(other, None)


def test_torch_scores_agree_with_the_numpy_max():
    torch = pytest.importorskip("torch")
    data = _video_set("ytbb-robust", {"0": [4, 9, 7], "2": [2]}, 3)
    logits = np.random.default_rng(0).normal(size=(4, 1000))
    got, weights, meta = _scores(data, logits)
    features = torch.tensor(logits, dtype=torch.float32)
    out = classifier.torch_scores(features, torch.tensor(weights), meta).numpy()
    np.testing.assert_allclose(out, got, rtol=1e-5)


def test_other_sets_keep_the_mean_probability_or_identity():
    from vlstress.testsets import labelmaps

    wnids = labelmaps.imagenet_wnids()
    mapped = ClassificationSet("demo", "demo-objects", ["cat"], ["cat"], "/x", [])
    given = {"cat": [281, 282]}
    classes = imagenet_map.imagenet_classes(mapped, given)
    assert imagenet_map.class_map_rule(mapped.kind, classes) == "mean-prob"
    imagenet = ClassificationSet("in", "imagenet", ["a", "b"], [wnids[1], wnids[2]], "/x", [])
    assert classifier.class_map_rule(imagenet, None) == "identity"
    assert imagenet_map.class_map_rule("imagenet-vid-robust", [[1], [2]]) == "max-logit"


def test_the_video_record_says_which_rule_mapped_the_logits(tmp_path, monkeypatch):
    import yaml

    from vlstress.io import sidecar, write_json, write_npy
    from vlstress.record import read_records
    from vlstress.suites.video.commands import evaluate_video
    from vlstress.testsets import manifest as testsets

    from conftest import REPO

    monkeypatch.chdir(tmp_path)
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    entry = dict(params["zeroshot"]["testsets"]["objects"])
    params["zeroshot"]["testsets"]["vid"] = {**entry, "kind": "imagenet-vid-robust"}
    params["suites"]["video"] = True
    params["video"] = {"testsets": ["vid"], "k": 1}
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    data = _video_set("imagenet-vid-robust", REV_MAP, 2)
    images = [
        {"path": f"x{o}.jpg", "label": 0, "labels": [0], "anchor": "x", "offset": o} for o in (0, 1)
    ]
    folder = tmp_path / "data/testsets/vid"
    testsets.write(
        folder / "manifest.json",
        ClassificationSet("vid", data.kind, data.classes, data.class_ids, str(folder), images),
    )
    model = {"slug": "m", "arch": "timm:x", "weights_label": "random-init (seed 0)"}
    meta = {"provenance": {"model": model, "seed": 0, "device": "cpu"}}
    emb = tmp_path / "results/embeddings/m/zeroshot/testsets/vid.npy"
    write_npy(emb, np.repeat(LOGITS, 2, axis=0).astype(np.float32))
    write_json(sidecar(emb), meta)
    clf = tmp_path / "results/embeddings/m/classifiers/vid.npy"
    write_npy(clf, classifier.class_map(data, None))
    rule = classifier.class_map_rule(data, None)
    write_json(
        sidecar(clf),
        {
            **meta,
            "classes": data.classes,
            "templates_source": "single",
            "logit_scale": 1.0,
            "scores": classifier.CLASS_MAP,
            "class_map_rule": rule,
        },
    )
    parser = argparse.ArgumentParser()
    evaluate_video.add_arguments(parser)
    evaluate_video.run(
        parser.parse_args(["--params", "params.yaml", "--model", "m", "--k", "1", "--out", "o"])
    )
    (record,) = read_records(tmp_path / "o")
    assert record.provenance["params"]["class_map_rule"] == "max-logit"
    assert record.metrics["pm1"] == pytest.approx(100.0)  # max-logit: class 0 on both frames
    assert json.dumps(record.provenance)  # serialisable
