"""The trimmed text encoder (default path of encoders.encode_texts) equals open_clip's
encode_text."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import torch

open_clip = pytest.importorskip("open_clip")
from open_clip.model import CLIP, CLIPTextCfg, CLIPVisionCfg, CustomTextCLIP  # noqa: E402

from vlstress.embedding.encoders import (  # noqa: E402
    encode_texts,
    encode_texts_raw,
    trimmable_text_tower,
)

CAPTIONS = [
    "A man with a red helmet on a small moped on a dirt road. ",
    "a dog",
    "Two cats.",
    "a dog",  # duplicate
    "A dirt path with a young person on a motor bike rests to the foreground of a verdant area "
    "with a bridge and a background of cloud-wreathed mountains. ",
    "word " * 90,  # longer than the 77-token context: truncated, eot at the last position
    "",
    "Girl blowing out the candle on an ice-cream ",
    "A young girl is preparing to blow out her candle.",
    "two cats.",
    "a dog",
]


def tiny(cls=CLIP, **text_kwargs):
    torch.manual_seed(0)
    vision = CLIPVisionCfg(layers=1, width=64, head_width=32, patch_size=16, image_size=32)
    text = CLIPTextCfg(width=32, heads=2, layers=2, **text_kwargs)
    return cls(embed_dim=16, vision_cfg=vision, text_cfg=text).eval()


@pytest.fixture(scope="module")
def tokenizer():
    return open_clip.get_tokenizer("ViT-B-32")


def reference(model, tokenizer, captions):
    with torch.no_grad():
        return model.encode_text(tokenizer(captions)).numpy()


@pytest.mark.parametrize(
    "cls, kwargs",
    [
        (CLIP, {}),
        (CustomTextCLIP, {}),
        (CustomTextCLIP, {"pool_type": "eos", "eos_id": 49407}),
        (CLIP, {"pool_type": "first"}),
    ],
)
def test_trimmed_matches_encode_text(tokenizer, cls, kwargs):
    model = tiny(cls, **kwargs)
    assert trimmable_text_tower(model)[0] is not None
    ref = reference(model, tokenizer, CAPTIONS)
    for batch_size in (1, 3, 64):
        out = encode_texts_raw(
            model, tokenizer, CAPTIONS, batch_size=batch_size, device="cpu", progress=False
        )
        assert out.shape == ref.shape and out.dtype == np.float32
        assert np.abs(out - ref).max() < 1e-5  # same rows, same (input) order
    # duplicates get identical rows
    assert np.array_equal(out[1], out[3]) and np.array_equal(out[1], out[10])


def test_normalised_and_order(tokenizer):
    model = tiny()
    emb = encode_texts(model, tokenizer, CAPTIONS, batch_size=4, device="cpu", progress=False)
    ref = reference(model, tokenizer, CAPTIONS)
    ref = ref / np.linalg.norm(ref, axis=1, keepdims=True)
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)
    assert np.abs(emb - ref).max() < 1e-5
    reversed_emb = encode_texts(
        model, tokenizer, CAPTIONS[::-1], batch_size=4, device="cpu", progress=False
    )
    assert np.abs(reversed_emb[::-1] - emb).max() < 1e-5


@pytest.mark.parametrize(
    "kwargs, reason",
    [
        ({"no_causal_mask": True}, "bidirectional"),
        ({"pool_type": "last"}, "'last'"),
        ({"embed_cls": True}, "CLS"),
    ],
)
def test_fallback_when_trimming_is_not_exact(tokenizer, caplog, kwargs, reason):
    cls = CustomTextCLIP if "embed_cls" in kwargs else CLIP
    model = tiny(cls, **kwargs)
    tower, why = trimmable_text_tower(model)
    assert tower is None and reason in why
    with caplog.at_level(logging.WARNING, logger="vlstress.embedding.encoders"):
        out = encode_texts_raw(
            model, tokenizer, CAPTIONS[:4], batch_size=2, device="cpu", progress=False
        )
    # the fallback is the plain path: the same computation as trim=False with the same batches, so
    # bit-equal
    plain = encode_texts_raw(
        model, tokenizer, CAPTIONS[:4], batch_size=2, device="cpu", trim=False, progress=False
    )
    np.testing.assert_array_equal(out, plain)
    # against one batch of 4 (another batching): equal up to float rounding, not bit for bit
    # (CPU-dependent kernels)
    ref = reference(model, tokenizer, CAPTIONS[:4])
    assert out.shape == ref.shape and out.dtype == np.float32
    unit = lambda a: a / np.linalg.norm(a, axis=1, keepdims=True)  # noqa: E731
    np.testing.assert_allclose(unit(out), unit(ref), rtol=0, atol=1e-5)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


def test_plain_path_on_request(tokenizer):
    model = tiny()
    out = encode_texts_raw(
        model, tokenizer, CAPTIONS, batch_size=5, device="cpu", trim=False, progress=False
    )
    assert np.abs(out - reference(model, tokenizer, CAPTIONS)).max() < 1e-5
