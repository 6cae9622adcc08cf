"""Adversarial attacks on a tiny zero-shot classifier: the checks that catch a broken attack.

Robust accuracy never above clean, non-increasing in eps for PGD, eps 0 gives clean
accuracy, perturbations within their budget and inside [0, 1], an FGSM step equal to a
hand-written one, reruns identical, and clear errors for bad attack entries.
"""

from __future__ import annotations

import json

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
    dict(kind="nes", eps=(2.0, 8.0), steps=200, extra={"samples": 20}),
    dict(kind="nes", norm="l2", eps=(64.0, 256.0), steps=200, extra={"samples": 20}),
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
        "queries": 0.0,
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
    with pytest.raises(
        VlstressError, match="attack 'n': nes is a query-limited attack and has no "
    ):
        adv.check_spec(adv.AttackSpec(name="n", kind="nes"))
    with pytest.raises(VlstressError, match="even integer >= 2.*got 7"):
        adv.check_spec(adv.AttackSpec(name="n", kind="nes", steps=100, extra={"samples": 7}))
    with pytest.raises(VlstressError, match="sigma must be a number > 0"):
        adv.check_spec(adv.AttackSpec(name="n", kind="nes", steps=100, extra={"sigma": 0}))
    with pytest.raises(VlstressError, match="budget of 10 is less than one NES step.*12 queries"):
        adv.check_spec(adv.AttackSpec(name="n", kind="nes", steps=10, extra={"samples": 10}))
    with pytest.raises(VlstressError, match="unknown extra option.*n_samples"):
        adv.check_spec(adv.AttackSpec(name="n", kind="nes", steps=100, extra={"n_samples": 10}))


def test_nes_gradient_approaches_the_true_gradient_with_more_samples():
    """On a tiny differentiable model the NES estimate's cosine with autograd's gradient grows with
    the samples (Ilyas et al. 2018: an unbiased estimate of the Gaussian-smoothed gradient)."""
    from vlstress.suites.adversarial.nes import nes_gradient

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 4 * 4, 5))
    x = torch.rand(6, 3, 4, 4, generator=torch.Generator().manual_seed(1))
    y = torch.arange(6) % 5

    def loss(batch, start):
        rows = (torch.arange(len(batch)) + start) % len(y)
        return torch.nn.functional.cross_entropy(model(batch), y[rows], reduction="none")

    probe = x.clone().requires_grad_(True)
    (true,) = torch.autograd.grad(loss(probe, 0).sum(), probe)

    def cosine(samples: int, seed: int) -> float:
        estimate = nes_gradient(
            loss,
            x,
            samples=samples,
            sigma=1e-3,
            max_batch_size=37,  # chunks that do not divide the rows: the target mapping holds
            generator=torch.Generator().manual_seed(seed),
        )
        return (
            torch.nn.functional.cosine_similarity(estimate.flatten(1), true.flatten(1), dim=1)
            .mean()
            .item()
        )

    cosines = [np.mean([cosine(n, seed) for seed in range(3)]) for n in (4, 40, 400, 4000)]
    assert all(later > earlier for earlier, later in zip(cosines, cosines[1:])), cosines
    assert cosines[0] < 0.5 and cosines[-1] > 0.97, cosines  # d = 48: about sqrt(n / (n + d))
    with pytest.raises(ValueError, match="even number of samples"):
        nes_gradient(loss, x, samples=3, sigma=1e-3, max_batch_size=8)


def test_queries_are_counted_per_image(setup):
    """A PGD step is one model evaluation per image; NES stays within its budget, counts its own
    queries per image (one for an image already wrong), and the two counts agree."""
    _, pixels, labels = setup
    clean, (result,) = attack(setup, kind="pgd", eps=(4.0,), steps=5)
    assert result.queries == 5.0 and result.image_queries is None
    clean, results = attack(setup, kind="nes", eps=(2.0, 8.0), steps=100, extra={"samples": 10})
    for result in results:
        per_image = result.image_queries
        assert per_image is not None and per_image.max() <= 100
        assert result.queries == pytest.approx(per_image.mean())
        assert np.all(per_image[~clean] == 1)  # already wrong: the first check stops it
        # an image NES did not break spent its whole budget: 9 steps of 10 + 1, then a check
        assert np.all(per_image[clean & result.correct] == 9 * 11 + 1)
        assert adv.attack_metrics(clean, result)["queries"] == result.queries


def test_subset_is_seeded_sorted_and_capped():
    rows = adv.subset(100, 10, seed=0)
    assert list(rows) == sorted(rows) and len(set(rows)) == 10
    assert np.array_equal(rows, adv.subset(100, 10, seed=0)) and not np.array_equal(
        rows, adv.subset(100, 10, seed=1)
    )
    assert list(adv.subset(5, 10, seed=0)) == list(range(5)) and list(
        adv.subset(5, None, seed=0)
    ) == list(range(5))


def test_the_query_figure_lists_every_attack_when_the_last_model_has_none_to_draw():
    """A model that classifies no image right has no attack success: its panel is empty, and the
    legend (beside the last panel) still names every attack."""

    import matplotlib.pyplot as plt
    import pandas as pd

    from vlstress.suites.adversarial.figures import adversarial_queries

    rows = []
    for label, success in (("A (random-init)", 50.0), ("B (random-init)", float("nan"))):
        for attack, queries in (("fgsm", 1.0), ("square", 20.0)):
            condition = json.dumps({"attack": attack, "eps": 4.0})
            for metric, value in (("attack_success", success), ("queries", queries)):
                rows.append(
                    {
                        "label": label,
                        "task": "adversarial",
                        "dataset": "objects",
                        "condition_json": condition,
                        "metric": metric,
                        "value": value,
                    }
                )
    fig, _ = adversarial_queries(pd.DataFrame(rows))
    legend = fig.axes[-1].get_legend()
    assert [text.get_text() for text in legend.get_texts()] == ["fgsm", "square"]
    plt.close(fig)


def test_outcomes_give_the_metrics_back_and_pair_models_on_the_same_images():
    """One block per eps: robust top-1 is the mean of `correct`, attack success the share of
    `fooled` among `clean_correct`; two models on the same sample are compared by McNemar on
    robust top-1 (attack success counts among each model's own clean-correct images: not
    paired)."""
    from scipy.stats import binomtest

    from vlstress.suites.adversarial.run import image_outcomes
    from vlstress.suites.findings.comparisons import comparison_table

    labels = np.array([0, 1, 2, 3, 0, 1, 2, 3])
    clean = np.array([1, 1, 1, 1, 1, 1, 0, 0], bool)
    strong = np.array([1, 1, 1, 1, 1, 0, 0, 0], bool)
    weak = np.array([0, 0, 0, 1, 0, 0, 0, 0], bool)
    for robust in (strong, weak):
        block = image_outcomes(clean, robust, labels)
        metrics = adv.attack_metrics(clean, adv.EpsResult(4.0, robust, np.zeros(8), np.zeros(8)))
        assert 100 * block.column("correct").mean() == metrics["robust_top1"]
        fooled = block.column("fooled")
        assert 100 * fooled.sum() / clean.sum() == pytest.approx(metrics["attack_success"])
    case = ("objects", "adversarial", json.dumps({"attack": "pgd", "eps": 4.0}))
    items = {
        ("strong", *case): [image_outcomes(clean, strong, labels)],
        ("weak", *case): [image_outcomes(clean, weak, labels)],
    }
    (row,) = comparison_table(items).to_dict("records")
    assert (row["model_a"], row["model_b"], row["metric"]) == ("strong", "weak", "robust_top1")
    assert (row["a_only"], row["b_only"]) == (4, 0)
    assert row["p"] == pytest.approx(binomtest(4, 4).pvalue)
    # another sample (other labels): not the same items, not compared
    items[("weak", *case)] = [image_outcomes(clean, weak, labels[::-1])]
    assert comparison_table(items).empty
