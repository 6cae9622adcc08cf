"""The robust fine-tuning objective: known answers, and agreement with open_clip's ClipLoss."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from open_clip.loss import ClipLoss

from vlstress.suites.finetune import losses


def unit(x: torch.Tensor) -> torch.Tensor:
    return F.normalize(x, dim=-1)


@pytest.fixture
def batch():
    g = torch.Generator().manual_seed(0)
    # image, text, text_alt, image_alt
    return [unit(torch.randn(6, 8, generator=g)) for _ in range(4)]


def test_hinge_known_answer():
    image = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    text = torch.tensor([[1.0, 0.0], [0.0, 1.0]])  # s(i, t) = 1
    text_alt = torch.tensor([[0.8, 0.6], [0.0, 1.0]])  # s(i, t~) = 0.8 and 1.0
    image_alt = torch.tensor([[0.0, 1.0], [1.0, 0.0]])  # s(i~, t) = 0
    sc = losses.FORMS["hinge"].sc(image, text, text_alt, image_alt, 100.0, 0.2)
    vc = losses.FORMS["hinge"].vc(image, text, text_alt, image_alt, 100.0, 0.2)
    assert float(sc) == pytest.approx(((0.2 - 1 + 0.8) + (0.2 - 1 + 1.0)) / 2)  # 0 and 0.2 -> 0.1
    assert float(vc) == 0.0  # the mixed images are far: no violation


def test_hard_negative_known_answer():
    image = torch.tensor([[1.0, 0.0]])
    text = torch.tensor([[1.0, 0.0]])
    text_alt = torch.tensor([[0.0, 1.0]])
    scale = 2.0
    # one positive (logit 2) against one hard negative (logit 0)
    expected = -math.log(math.exp(2.0) / (math.exp(2.0) + math.exp(0.0)))
    assert float(
        losses.FORMS["hard-negative"].sc(image, text, text_alt, image, scale, 0.0)
    ) == pytest.approx(expected)


def test_zero_weights_give_open_clips_clip_loss(batch):
    image, text, text_alt, image_alt = batch
    scale = torch.tensor(10.0)
    total, terms = losses.objective(
        ClipLoss(), image, text, text_alt, image_alt, scale, w_sc=0.0, w_vc=0.0
    )
    logits = scale * image @ text.T
    labels = torch.arange(6)
    by_hand = (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels)) / 2
    assert float(total) == pytest.approx(float(by_hand), rel=1e-6)
    assert terms["sc"] == terms["vc"] == 0.0 and terms["total"] == terms["clip"]


@pytest.mark.parametrize("form", list(losses.FORMS))
def test_the_total_adds_the_weighted_terms_and_gradients_flow(batch, form):
    image, text, text_alt, image_alt = (x.clone().requires_grad_(True) for x in batch)
    total, terms = losses.objective(
        ClipLoss(),
        image,
        text,
        text_alt,
        image_alt,
        torch.tensor(10.0),
        w_sc=0.5,
        w_vc=2.0,
        form=form,
    )
    assert terms["total"] == pytest.approx(
        terms["clip"] + 0.5 * terms["sc"] + 2.0 * terms["vc"], rel=1e-6
    )
    total.backward()
    # the altered captions are pushed away
    assert text_alt.grad is not None and text_alt.grad.abs().sum() > 0
    assert image_alt.grad is not None and image_alt.grad.abs().sum() > 0


def test_margins(batch):
    image, text, text_alt, image_alt = batch
    m = losses.margins(image, text, text_alt, image_alt)
    positive = (image * text).sum(-1)
    assert m["margin_sc"] == pytest.approx(float((positive - (image * text_alt).sum(-1)).mean()))
    assert m["margin_vc"] == pytest.approx(float((positive - (image_alt * text).sum(-1)).mean()))
