"""Adversarial attacks on a tiny zero-shot classifier: the checks that catch a broken attack.

Robust accuracy never above clean, non-increasing in eps for PGD, eps 0 gives clean
accuracy, perturbations within their budget and inside [0, 1], an FGSM step equal to a
hand-written one, reruns identical, and clear errors for bad attack entries.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from vlstress.errors import VlstressError
from vlstress.suites.adversarial import attacks as adv

pytest.importorskip("torchattacks")

N_CLASSES = 4


@pytest.fixture(scope="module")
def setup():
    """A tiny random CLIP whose classifier rows are the embeddings of 4 of the images, so most
    images are classified right."""
    import open_clip
    from open_clip.model import CLIPTextCfg, CLIPVisionCfg

    torch.manual_seed(0)
    model = open_clip.CLIP(
        embed_dim=16,
        vision_cfg=CLIPVisionCfg(layers=1, width=32, patch_size=8, image_size=32, head_width=16),
        text_cfg=CLIPTextCfg(context_length=16, vocab_size=100, width=32, heads=2, layers=1),
    ).eval()
    to_pixels, mean, std = adv.pixel_pipeline(open_clip.image_transform(32, is_train=False))
    pixels = torch.rand(12, 3, 32, 32, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        norm = (pixels - torch.tensor(mean).view(1, 3, 1, 1)) / torch.tensor(std).view(1, 3, 1, 1)
        features = torch.nn.functional.normalize(model.encode_image(norm), dim=-1)
    weights = features[:N_CLASSES].numpy()
    labels = (features @ features[:N_CLASSES].T).argmax(dim=1).numpy()
    labels[-2:] = (labels[-2:] + 1) % N_CLASSES  # two images wrong on clean data
    module = adv.pixel_zero_shot(model, weights, mean, std, 100.0, "cpu")
    return module, pixels, labels


def attack(setup, **fields):
    module, pixels, labels = setup
    spec = adv.AttackSpec(name=fields.pop("name", fields["kind"]), **fields)
    return adv.run_attack(
        module, spec, pixels, labels, n_classes=N_CLASSES, seed=0, batch_size=5, progress=False
    )


BOUNDED = [
    dict(kind="fgsm", eps=(2.0, 8.0)),
    dict(kind="bim", eps=(2.0, 8.0), steps=4),
    dict(kind="pgd", eps=(2.0, 8.0), steps=5, restarts=2),
    dict(kind="pgd", norm="l2", eps=(64.0, 256.0), steps=5),
    dict(kind="mifgsm", eps=(2.0, 8.0), steps=4),
    dict(kind="difgsm", eps=(2.0, 8.0), steps=4),
    dict(kind="spsa", eps=(8.0,), steps=2, extra={"nb_sample": 16, "max_batch_size": 16}),
    dict(kind="square", eps=(8.0,), steps=30),
    dict(kind="square", norm="l2", eps=(256.0,), steps=30),
    dict(kind="autoattack", eps=(8.0,)),
]


@pytest.mark.parametrize("fields", BOUNDED, ids=lambda f: f"{f['kind']}-{f.get('norm', 'linf')}")
def test_bounded_attacks_stay_in_budget_and_never_beat_clean(setup, fields):
    _, pixels, _ = setup
    clean, results = attack(setup, **fields)
    assert clean.mean() == pytest.approx(10 / 12)
    for result in results:
        metrics = adv.attack_metrics(clean, result)
        assert metrics["robust_top1"] <= metrics["top1_clean"] + 1e-9
        budget = result.linf if fields.get("norm", "linf") == "linf" else result.l2
        assert budget.max() <= result.eps + 1e-3  # 1/255 units, float32 rounding
    assert results[-1].correct.mean() < clean.mean()  # the largest budget breaks at least one image


def test_pgd_is_non_increasing_in_eps_and_zero_eps_is_clean(setup):
    clean, results = attack(setup, kind="pgd", eps=(0.0, 0.5, 1.0, 2.0, 4.0, 8.0), steps=10)
    robust = [adv.attack_metrics(clean, r)["robust_top1"] for r in results]
    assert robust[0] == pytest.approx(100 * clean.mean())
    assert results[0].linf.max() == 0.0
    assert all(later <= earlier for earlier, later in zip(robust, robust[1:])), robust
    assert robust[-1] < robust[0]
    fgsm_clean, fgsm = attack(setup, kind="fgsm", eps=(0.0,))
    assert np.array_equal(fgsm[0].correct, fgsm_clean)


def test_fgsm_equals_a_hand_written_step(setup):
    module, pixels, labels = setup
    eps = 4 / 255
    x = pixels.clone().requires_grad_(True)
    loss = torch.nn.functional.cross_entropy(module(x), torch.as_tensor(labels))
    (grad,) = torch.autograd.grad(loss, x)
    expected = (pixels + eps * grad.sign()).clamp(0, 1)
    import torchattacks

    got = torchattacks.FGSM(module, eps=eps)(pixels, torch.as_tensor(labels))
    assert torch.allclose(got, expected, atol=1e-6)
    spec = adv.AttackSpec(name="fgsm", kind="fgsm", eps=(4.0,))
    clean, (result,) = adv.run_attack(
        module, spec, pixels, labels, n_classes=N_CLASSES, seed=0, batch_size=12, progress=False
    )
    with torch.no_grad():
        hand = module(expected).argmax(dim=1).numpy() == labels
    assert np.array_equal(result.correct, hand)


def test_reruns_are_identical(setup):
    first = attack(setup, kind="pgd", eps=(4.0,), steps=3)
    second = attack(setup, kind="pgd", eps=(4.0,), steps=3)
    assert np.array_equal(first[1][0].linf, second[1][0].linf) and np.array_equal(
        first[1][0].l2, second[1][0].l2
    )


def test_deepfool_counts_only_perturbations_within_eps(setup):
    clean, results = attack(setup, kind="deepfool", norm="l2", eps=(0.0, 1e9), steps=20)
    zero, unbounded = results
    assert np.array_equal(zero.correct, clean)  # nothing fits in a zero budget
    assert unbounded.correct.mean() < clean.mean()  # DeepFool does fool the tiny model
    assert np.all(unbounded.correct <= clean)


def test_attack_metrics_known_answer():
    clean = np.array([True, True, True, False])
    result = adv.EpsResult(
        4.0,
        np.array([True, False, False, False]),
        np.array([4.0, 4.0, 2.0, 0.0]),
        np.array([10.0, 20.0, 30.0, 40.0]),
    )
    metrics = adv.attack_metrics(clean, result)
    assert metrics == {
        "top1_clean": 75.0,
        "robust_top1": 25.0,
        "drop": 50.0,
        "attack_success": pytest.approx(200 / 3),
        "mean_linf": 2.5,
        "max_linf": 4.0,
        "mean_l2": 25.0,
        "max_l2": 40.0,
    }
    assert (
        adv.attack_metrics(
            np.zeros(2, bool), adv.EpsResult(1.0, np.zeros(2, bool), np.zeros(2), np.zeros(2))
        )["attack_success"]
        is None
    )


def test_bad_attack_entries_are_named():
    with pytest.raises(
        VlstressError, match=r"attack 'x': unknown kind 'pgdd' \(did you mean 'pgd'\?\)"
    ):
        adv.check_spec(adv.AttackSpec(name="x", kind="pgdd"))
    with pytest.raises(VlstressError, match="supports norm linf, not 'l2'"):
        adv.check_spec(adv.AttackSpec(name="x", kind="fgsm", norm="l2"))
    with pytest.raises(VlstressError, match="set from the attack's own fields"):
        adv.check_spec(adv.AttackSpec(name="x", kind="pgd", extra={"eps": 1}))
    with pytest.raises(VlstressError, match="unknown extra option.*nb_samples"):
        adv.check_spec(adv.AttackSpec(name="x", kind="spsa", extra={"nb_samples": 3}))
    with pytest.raises(VlstressError, match="eps must be"):
        adv.check_spec(adv.AttackSpec(name="x", kind="pgd", eps=()))
    assert adv.parse_extra("decay=1.0,nb_sample=32,loss=ce,flag=true") == {
        "decay": 1.0,
        "nb_sample": 32,
        "loss": "ce",
        "flag": True,
    }
    with pytest.raises(VlstressError, match="key=value"):
        adv.parse_extra("decay")


def test_subset_is_seeded_sorted_and_capped():
    rows = adv.subset(100, 10, seed=0)
    assert list(rows) == sorted(rows) and len(set(rows)) == 10
    assert np.array_equal(rows, adv.subset(100, 10, seed=0)) and not np.array_equal(
        rows, adv.subset(100, 10, seed=1)
    )
    assert list(adv.subset(5, 10, seed=0)) == list(range(5)) and list(
        adv.subset(5, None, seed=0)
    ) == list(range(5))
