"""Supervised ImageNet classifiers (timm) as models of the registry: their logits, their class maps
to a test set's classes, their errors, and the stages they take part in."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
import yaml
from PIL import Image

from vlstress.embedding import models
from vlstress.embedding.encoders import encode_images
from vlstress.errors import VlstressError
from vlstress.suites.zeroshot import classifier
from vlstress.testsets import imagenet_map, labelmaps
from vlstress.testsets.manifest import ClassificationSet

ARCH = "timm:resnet18"


@pytest.fixture(scope="module")
def photos(module_tmp) -> list[str]:
    folder = module_tmp.mktemp("photos")
    rng = np.random.default_rng(0)
    paths = []
    for i, size in enumerate([(300, 260), (180, 240), (224, 224)]):
        path = folder / f"{i}.png"
        Image.fromarray(rng.integers(0, 256, (*size[::-1], 3), dtype=np.uint8)).save(path)
        paths.append(str(path))
    return paths


def test_logits_are_timms_own_forward_on_the_same_batch(photos):
    import timm

    spec = models.ModelSpec("r18", ARCH, None, seed=5)
    model, preprocess, tokenizer = models.load(spec, "cpu", threads=2)
    assert tokenizer is None and spec.kind == "timm"
    ours = encode_images(model, preprocess, photos, batch_size=len(photos), device="cpu")
    torch.manual_seed(5)  # the seed of the entry decides the random init
    reference = timm.create_model("resnet18", pretrained=False).eval()
    config = timm.data.resolve_model_data_config(reference)
    transform = timm.data.create_transform(**config, is_training=False)
    batch = torch.stack([transform(Image.open(p).convert("RGB")) for p in photos])
    with torch.no_grad():
        expected = reference(batch).numpy()
    assert ours.shape == (3, 1000)
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-5)
    assert not np.allclose(np.linalg.norm(ours, axis=1), 1.0)  # logits, never normalised
    described = models.describe(spec, model)
    assert described["kind"] == "timm" and described["weights"] == "random-init"
    assert described["n_params"] == sum(p.numel() for p in reference.parameters())


def test_a_checkpoint_is_loaded_strictly_and_hashed(tmp_path, photos):
    import timm
    from safetensors.torch import save_file

    torch.manual_seed(11)
    net = timm.create_model("resnet18", pretrained=False).eval()
    path = tmp_path / "r18.safetensors"
    save_file(net.state_dict(), str(path))
    spec = models.ModelSpec("r18-ckpt", ARCH, str(path))
    model, preprocess, _ = models.load(spec, "cpu")
    batch = torch.stack([preprocess(Image.open(photos[0]).convert("RGB"))])
    with torch.no_grad():
        np.testing.assert_array_equal(model.encode_image(batch).numpy(), net(batch).numpy())
    assert models.describe(spec)["checkpoint_sha256"]
    broken = tmp_path / "broken.safetensors"
    save_file({"fc.weight": torch.zeros(3, 3)}, str(broken))
    with pytest.raises(VlstressError, match="r18-broken.*could not load"):
        models.load(models.ModelSpec("r18-broken", ARCH, str(broken)), "cpu")


@pytest.mark.parametrize(
    ("arch", "pretrained", "message"),
    [
        ("timm:resnet_nope", None, "unknown timm architecture 'resnet_nope'"),
        ("timm:resnet18.a1_in1k", None, "a pretrained tag goes in `pretrained`"),
        ("timm:resnet18", "no_such_tag", "not a timm pretrained tag of resnet18.*a1_in1k"),
        ("timm:resnet18", "missing/r18.pth", "checkpoint file not found"),
    ],
)
def test_bad_timm_entries_are_named(arch, pretrained, message):
    with pytest.raises(VlstressError, match=message):
        models.check_spec(models.ModelSpec("bad-model", arch, pretrained))


def _logits(rows: int = 4, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(0, 3, (rows, 1000)).astype(np.float32)


def test_class_map_scores_are_log_mean_probabilities():
    logits = _logits()
    weights = imagenet_map.class_map_matrix([[1, 2, 7], [3], [999, 0]])
    got = classifier.scores(logits, weights, {"scores": classifier.CLASS_MAP})
    exp = np.exp(logits.astype(np.float64))
    expected = np.log(np.stack([exp[:, [1, 2, 7]].mean(1), exp[:, 3], exp[:, [999, 0]].mean(1)], 1))
    np.testing.assert_allclose(got, expected, rtol=1e-7)  # weights 1/k in float32
    # their softmax is each class's mean probability, renormalised over the classes
    probs = torch.softmax(torch.tensor(logits, dtype=torch.float64), dim=1).numpy()
    means = np.stack([probs[:, [1, 2, 7]].mean(1), probs[:, 3], probs[:, [999, 0]].mean(1)], 1)
    soft = torch.softmax(torch.tensor(got), dim=1).numpy()
    np.testing.assert_allclose(soft, means / means.sum(1, keepdims=True), rtol=1e-6)
    # torch (the attacks) agrees with numpy
    ours = classifier.torch_scores(
        torch.tensor(logits), torch.tensor(weights), {"scores": classifier.CLASS_MAP}
    )
    np.testing.assert_allclose(ours.numpy(), expected, rtol=1e-5)
    logits_t = torch.tensor(logits, requires_grad=True)
    classifier.torch_scores(logits_t, torch.tensor(weights), {"scores": classifier.CLASS_MAP})[
        :, 0
    ].sum().backward()
    assert logits_t.grad is not None and logits_t.grad[:, [1, 2, 7]].abs().sum() > 0
    assert logits_t.grad[:, 3].abs().sum() == 0  # another class's members get no gradient
    # an image-text model's classifier scores by cosine, as before
    np.testing.assert_array_equal(classifier.scores(logits, logits[:2], {}), logits @ logits[:2].T)


def test_a_subset_ranks_as_its_logits_do():
    """One ImageNet class per class (ImageNet-R/-A): a class scores its logit (imagenet-testbed's
    protocol: the subset's logits)."""
    logits = _logits(rows=50, seed=1)
    subset = list(labelmaps.subset_indices("imagenet-r"))
    weights = imagenet_map.class_map_matrix([[i] for i in subset])
    got = classifier.scores(logits, weights, {"scores": classifier.CLASS_MAP})
    np.testing.assert_allclose(got, logits[:, subset], rtol=0, atol=1e-12)


def test_a_class_far_below_the_top_keeps_its_exact_score():
    logits = np.zeros((1, 1000))
    logits[0, 0] = 2000.0  # exp of every other logit minus the top underflows
    weights = imagenet_map.class_map_matrix([[0], [5], [5, 6]])
    got = classifier.scores(logits, weights, {"scores": classifier.CLASS_MAP})
    np.testing.assert_allclose(got, [[2000.0, 0.0, 0.0]], atol=1e-12)


def _set(classes, class_ids, kind="imagefolder") -> ClassificationSet:
    return ClassificationSet("toy", kind, list(classes), list(class_ids), "/nowhere", [])


def test_classes_are_mapped_by_wnid_objectnet_or_a_given_map(tmp_path):
    wnids = labelmaps.imagenet_wnids()
    assert imagenet_map.imagenet_classes(_set(["a", "b"], [wnids[7], wnids[400]])) == [[7], [400]]
    folder, indices = next(iter(labelmaps.objectnet_to_imagenet().items()))
    assert imagenet_map.imagenet_classes(_set(["x"], [folder], "objectnet")) == [indices]
    video = _set(["dog", "cat"], ["n02084071", "n02121808"], "imagenet-vid-robust")
    video.source = {"imagenet_indices": {"0": [152, 151], "1": [281]}}  # rev_class_idx_map
    assert imagenet_map.imagenet_classes(video) == [[151, 152], [281]]
    given = tmp_path / "map.json"
    given.write_text(json.dumps({"classes": {"b": [wnids[3], 9]}}))
    mapped = imagenet_map.imagenet_classes(
        _set(["a", "b"], [wnids[7], "n0"]), imagenet_map.read_map(str(given))
    )
    assert mapped == [[7], [3, 9]]
    with pytest.raises(VlstressError, match="toy.*no ImageNet-1k classes for b.*imagenet_maps"):
        imagenet_map.imagenet_classes(_set(["a", "b"], [wnids[7], "n0"]))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ({"cat": []}, "class 'cat'.*non-empty list"),
        ({"cat": ["n99999999"]}, "'n99999999' is no ImageNet-1k wnid"),
        ({"cat": [1000]}, "1000 is no ImageNet-1k wnid or class index"),
        (["cat"], "expected a json object"),
    ],
)
def test_a_malformed_map_is_named(tmp_path, content, message):
    path = tmp_path / "map.json"
    path.write_text(json.dumps(content))
    with pytest.raises(VlstressError, match=message):
        imagenet_map.read_map(str(path))


def test_the_shipped_maps_hold_real_imagenet_classes():
    assert imagenet_map.shipped() == ["coco-supercategories", "demo"]
    demo = imagenet_map.read_map("demo")
    names = labelmaps.imagenet_classnames()
    assert set(demo) == {"camera", "cat", "cup of coffee", "motorcycle", "rocket"}
    assert {names[i] for i in demo["cat"]} >= {"tabby cat", "Siamese cat"}
    coco = imagenet_map.read_map("coco-supercategories")
    assert coco["animal"] == list(range(398)) and len(coco) == 8
    with pytest.raises(VlstressError, match="no such file, nor a shipped map"):
        imagenet_map.read_map("nowhere.json")


def _with_timm(params: dict) -> dict:
    params["models"]["r18-random"] = {"arch": ARCH, "pretrained": None}
    return params


def test_a_timm_model_runs_the_classification_stages_only(repo_root):
    from vlstress.params import load
    from vlstress.pipeline import dvc, snakemake

    params = load([repo_root / "params.yaml"])
    params["models"] = {"vit": {"arch": "ViT-B-32", "pretrained": None}}
    targets = set(snakemake.targets(_with_timm(params)))
    for model in ("r18-random", "vit"):
        for record in ("zeroshot-objects", "adversarial-pgd", "calibration", "shape_bias"):
            assert f"results/metrics/{model}/{record}.json" in targets
    assert not [t for t in targets if "r18-random" in t and "retrieval" in t]
    assert [t for t in targets if "/vit/" in t and "retrieval" in t]
    rendered = dvc.render(params)
    stages = yaml.safe_load(rendered)["stages"]
    assert sorted(stages["embed_zeroshot"]["foreach"]) == ["r18-random", "vit"]
    assert list(stages["embed_retrieval"]["foreach"]) == ["vit"]  # no text tower: left out
    names = {name for name, _ in dvc.addresses(params)}
    assert "embed_retrieval@vit" in names and "embed_zeroshot@r18-random" in names
    assert "embed_retrieval@r18-random" not in names
    assert not [n for n in names if n.startswith("prompt_ablation") and "r18" in n]


def test_params_refuse_a_timm_model_where_a_text_tower_is_needed(repo_root):
    from vlstress.params import load
    from vlstress.params_check import problems

    params = _with_timm(load([repo_root / "params.yaml"]))
    params["overlap"]["detector"] = "r18-random"
    params["finetune"]["base"] = {"slug": "r18-random", "arch": ARCH, "pretrained": None}
    params["zeroshot"]["imagenet_maps"] = "objects=demo,nope=demo,broken"
    found = "\n".join(problems(params))
    assert "overlap.detector: 'r18-random' is a supervised classifier" in found
    assert "finetune.base: timm:resnet18 is a supervised classifier" in found
    assert "'broken' is not a `test set=map file` pair" in found
    params["zeroshot"]["imagenet_maps"] = "objects=demo,nope=demo"
    assert "zeroshot.imagenet_maps.nope: unknown test set" in "\n".join(problems(params))
    params["zeroshot"]["imagenet_maps"] = None  # the demo's objects need the shipped map
    found = "\n".join(problems(params))
    assert "zeroshot.testsets.objects: a demo-objects set has no ImageNet-1k classes" in found
    assert 'imagenet_maps: "objects=<file>"' in found


def test_the_shipped_timm_costs_are_the_counted_ones():
    from vlstress.cost import profile
    from vlstress.embedding.timm_models import count_gflops

    for arch in ("timm:resnet18", "timm:vit_base_patch16_224"):
        shipped = profile.TIMM_PROFILE[arch]
        size, gflops = count_gflops(arch)
        assert gflops == pytest.approx(shipped.image_gflops, abs=5e-4)
        assert size == shipped.image_size and shipped.text_gflops == 0
    # open_clip's own profile of the same network agrees (timm's convnext_base)
    assert profile.TIMM_PROFILE["timm:convnext_base"].image_gflops == pytest.approx(
        profile.PROFILE["convnext_base"].image_gflops, rel=1e-3
    )
    with pytest.raises(VlstressError, match="unknown timm architecture 'nope'"):
        count_gflops("timm:nope")
    with pytest.raises(VlstressError, match="unknown architecture 'timm:nope'"):
        profile.arch_cost("timm:nope")
