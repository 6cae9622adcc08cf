"""The robust fine-tuning objective: CLIP loss + w_sc * SC + w_vc * VC (RoCOCO's proposed losses).

For a batch of image features i, their captions' features t, one altered caption per image
t~ (a one-word replacement of t, as the text stress-test makes them) and one mixed image per
caption i~ (the image mixed or patched with another training image), all L2-normalised, with
s the cosine similarity:

- semantic contrastive (SC): the altered caption is an extra negative for its image;
- visual contrastive (VC): the mixed image is an extra negative for its caption.

Two forms (registry `FORMS`):
- `hard-negative` (default): the altered captions are appended to the image-to-text logits of
  the CLIP loss (and the mixed images to the text-to-image logits), each row's own positive
  competing with every in-batch negative and every hard negative, at the model's logit scale:
  SC = CE(scale * i @ [t; t~]^T, diag), VC = CE(scale * t @ [i; i~]^T, diag). It is the CLIP
  loss's own form, needs no margin to tune, and pushes t~ below t by a margin the softmax
  adapts to the batch.
- `hinge`: [alpha - s(i, t) + s(i, t~)]+ and [alpha - s(i, t) + s(i~, t)]+, the margin ranking
  form, averaged over the batch (a mean, not a sum, so the weight does not depend on the batch
  size).

The CLIP term is open_clip's `ClipLoss` (all-gathered across ranks under DDP); SC and VC use
the rank's own batch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F


def _hinge_sc(image, text, text_alt, image_alt, scale, margin):
    positive = (image * text).sum(dim=-1)
    return F.relu(margin - positive + (image * text_alt).sum(dim=-1)).mean()


def _hinge_vc(image, text, text_alt, image_alt, scale, margin):
    positive = (image * text).sum(dim=-1)
    return F.relu(margin - positive + (image_alt * text).sum(dim=-1)).mean()


def _hard_sc(image, text, text_alt, image_alt, scale, margin):
    logits = scale * image @ torch.cat([text, text_alt]).T
    return F.cross_entropy(logits, torch.arange(len(image), device=image.device))


def _hard_vc(image, text, text_alt, image_alt, scale, margin):
    logits = scale * text @ torch.cat([image, image_alt]).T
    return F.cross_entropy(logits, torch.arange(len(text), device=text.device))


@dataclass(frozen=True)
class Form:
    sc: Callable
    vc: Callable
    description: str


FORMS: dict[str, Form] = {
    "hard-negative": Form(
        _hard_sc,
        _hard_vc,
        "altered captions / mixed images appended as hard negatives of the InfoNCE logits",
    ),
    "hinge": Form(
        _hinge_sc, _hinge_vc, "margin ranking [alpha - s(i, t) + s(i, t~)]+, mean over the batch"
    ),
}
DEFAULT_FORM = "hard-negative"


def margins(image, text, text_alt, image_alt) -> dict[str, float]:
    """Mean s(i, t) - s(i, t~) (semantic) and s(i, t) - s(i~, t) (visual) of a batch: what SC and VC
    widen."""
    with torch.no_grad():
        positive = (image * text).sum(dim=-1)
        return {
            "margin_sc": float((positive - (image * text_alt).sum(dim=-1)).mean()),
            "margin_vc": float((positive - (image_alt * text).sum(dim=-1)).mean()),
        }


def objective(
    clip_loss,
    image,
    text,
    text_alt,
    image_alt,
    logit_scale,
    *,
    w_sc: float,
    w_vc: float,
    form: str = DEFAULT_FORM,
    margin: float = 0.2,
) -> tuple[torch.Tensor, dict[str, float]]:
    """(total loss, its terms as floats) for normalised features; a zero weight skips its term's
    computation."""
    f = FORMS[form]
    clip = clip_loss(image, text, logit_scale)
    total = clip
    terms = {"clip": float(clip.detach())}
    for name, weight, term in (("sc", w_sc, f.sc), ("vc", w_vc, f.vc)):
        if weight:
            value = term(image, text, text_alt, image_alt, logit_scale, margin)
            total = total + weight * value
            terms[name] = float(value.detach())
        else:
            terms[name] = 0.0
    terms["total"] = float(total.detach())
    return total, terms
