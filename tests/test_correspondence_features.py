"""Dense features of frozen image towers: agreement with Probe3D's readers, shapes, batch
independence, models left unchanged, and towers no rule reads."""

from __future__ import annotations

import json
import logging

import numpy as np
import open_clip
import pytest
import timm
import torch
import torch.nn.functional as F

from vlstress.embedding.models import add_model_configs
from vlstress.errors import VlstressError
from vlstress.pool import attributes
from vlstress.suites.correspondence import features
from vlstress.suites.correspondence.features import DenseTower

# ---------------------------------------------------------------------------------------------
# Transcribed from Probe3D (github.com/mbanani/probe3d): evals/models/utils.py (center_padding,
# resize_pos_embed), evals/models/clip.py (CLIP.forward, dense output of the last layer) and
# evals/models/convnext.py (ConvNext.forward, dense output of the last stage).
# MIT License, Copyright (c) 2024 Mohamed El Banani. Permission is hereby granted, free of
# charge, to any person obtaining a copy of this software and associated documentation files
# (the "Software"), to deal in the Software without restriction, including without limitation
# the rights to use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies of
# the Software, and to permit persons to whom the Software is furnished to do so, subject to the
# following conditions: The above copyright notice and this permission notice shall be included
# in all copies or substantial portions of the Software. THE SOFTWARE IS PROVIDED "AS IS",
# WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED.
# Changes: einops' rearrange/repeat written as reshape/permute/expand; the model is passed in
# instead of loaded from a pretrained tag; only the dense output of the last layer is kept.


def probe3d_resize_pos_embed(pos_embed, hw, has_cls_token=True):
    n_grid = pos_embed.shape[0] - 1 if has_cls_token else pos_embed.shape[0]
    if n_grid == hw[0] * hw[1]:
        return pos_embed
    if has_cls_token:
        cls_embed, pos_embed = pos_embed[[0]], pos_embed[1:]
    orig_dim = int(pos_embed.shape[0] ** 0.5)
    # E.rearrange(pos_embed, "(h w) c -> 1 c h w", h=orig_dim)
    pos_embed = pos_embed.reshape(orig_dim, -1, pos_embed.shape[-1]).permute(2, 0, 1)[None]
    pos_embed = F.interpolate(pos_embed, hw, mode="bicubic", align_corners=False, antialias=True)
    # E.rearrange(pos_embed, "1 c h w -> (h w) c")
    pos_embed = pos_embed[0].permute(1, 2, 0).reshape(-1, pos_embed.shape[1])
    if has_cls_token:
        pos_embed = torch.cat([cls_embed, pos_embed], dim=0)
    return pos_embed


def probe3d_center_padding(images, patch_size):
    _, _, h, w = images.shape
    diff_h = h % patch_size
    diff_w = w % patch_size
    if diff_h == 0 and diff_w == 0:
        return images
    pad_h = patch_size - diff_h
    pad_w = patch_size - diff_w
    pad_t = pad_h // 2
    pad_l = pad_w // 2
    pad_r = pad_w - pad_l
    pad_b = pad_h - pad_t
    images = F.pad(images, (pad_l, pad_r, pad_t, pad_b))
    return images


def probe3d_clip_forward(visual, images):
    patch_size = visual.conv1.stride[0]
    multilayers = [len(visual.transformer.resblocks) - 1]

    images = probe3d_center_padding(images, patch_size)
    img_h, img_w = images.shape[-2:]
    out_hw = (img_h // patch_size, img_w // patch_size)

    x = visual.conv1(images)
    x_hw = x.shape[-2:]
    x = x.flatten(2).transpose(1, 2)  # E.rearrange(x, "b c h w -> b (h w) c")

    _cls_embed = visual.class_embedding.expand(x.shape[0], 1, -1)  # E.repeat "c -> b 1 c"
    x = torch.cat([_cls_embed.to(x.dtype), x], dim=1)

    pos_embed = probe3d_resize_pos_embed(visual.positional_embedding, x_hw)
    x = visual.ln_pre(x + pos_embed.to(x.dtype))

    embeds = []
    for i, blk in enumerate(visual.transformer.resblocks):
        x = blk(x)
        if i in multilayers:
            embeds.append(x)
            if len(embeds) == len(multilayers):
                break

    dense = embeds[0][:, 1:]  # tokens_to_output("dense", ...)
    h, w = out_hw
    return dense.reshape(dense.shape[0], h, w, -1).permute(0, 3, 1, 2).contiguous()


def probe3d_convnext_forward(trunk, images):
    patch_size = 16
    multilayers = [3]
    images = probe3d_center_padding(images, patch_size)
    img_h, img_w = images.shape[-2:]
    out_hw = (img_h // patch_size, img_w // patch_size)
    x = trunk.stem(images)
    embeds = []
    for i, stage in enumerate(trunk.stages):
        x = stage(x)
        if i in multilayers:
            embeds.append(x)
            if len(embeds) == len(multilayers):
                break
    return F.interpolate(embeds[0], out_hw, mode="bilinear")


# ---------------------------------------------------------------------------------------------


TEXT = {"context_length": 77, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1}
# small stand-ins read by the same rules as convnext_* (a timm ConvNeXt trunk) and RN50 (CLIP's
# modified ResNet): their forwards take milliseconds
TINY = {
    "tiny-convnext": {
        "embed_dim": 32,
        "vision_cfg": {"timm_model_name": "convnext_atto", "timm_pool": "", "image_size": 64},
        "text_cfg": TEXT,
    },
    "tiny-rn": {
        "embed_dim": 32,
        "vision_cfg": {"image_size": 64, "layers": [1, 1, 1, 1], "width": 16, "patch_size": None},
        "text_cfg": TEXT,
    },
}


@pytest.fixture(scope="module", autouse=True)
def tiny_configs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("model-configs")
    for name, config in TINY.items():
        (folder / f"{name}.json").write_text(json.dumps(config))
    open_clip.add_model_config(folder)


def _open_clip(arch: str, device: str | None = None):
    add_model_configs()
    torch.manual_seed(0)
    logging.disable(logging.WARNING)  # "No pretrained weights loaded": random init is meant
    try:
        with torch.device(device or "cpu"):
            return open_clip.create_model(arch, pretrained=None, device=device or "cpu").eval()
    finally:
        logging.disable(logging.NOTSET)


class TimmClassifier(torch.nn.Module):
    """A timm network as vlstress.embedding.timm_models wraps it (`.net`)."""

    def __init__(self, net):
        super().__init__()
        self.net = net


def _timm(name: str, **kwargs):
    torch.manual_seed(0)
    return TimmClassifier(timm.create_model(name, pretrained=False, **kwargs).eval())


@pytest.fixture(scope="module")
def vit():
    return _open_clip("ViT-S-32-alt")


@pytest.fixture(scope="module")
def convnext():
    return _open_clip("tiny-convnext")


@pytest.fixture(scope="module")
def rn():
    return _open_clip("tiny-rn")


@pytest.fixture(scope="module")
def resnet18():
    return _timm("resnet18")


def _images(n: int, height: int, width: int, seed: int = 1):
    return torch.randn(n, 3, height, width, generator=torch.Generator().manual_seed(seed))


# 224: the native grid; 256 x 320: another grid, no padding; 200 x 260: padded on both sides
@pytest.mark.parametrize("size", [(224, 224), (256, 320), (200, 260)])
def test_vit_features_equal_probe3d_clip_reader(vit, size):
    images = _images(2, *size)
    ours = DenseTower(vit, "ViT-S-32-alt", "cpu")(images)
    with torch.no_grad():
        theirs = probe3d_clip_forward(vit.visual, images)
    assert ours.shape == theirs.shape == (2, 384, -(-size[0] // 32), -(-size[1] // 32))
    torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("size", [(64, 64), (72, 88)])
def test_convnext_features_equal_probe3d_convnext_reader(convnext, size):
    images = _images(2, *size)
    tower = DenseTower(convnext, "tiny-convnext", "cpu")
    ours = tower(images)
    with torch.no_grad():
        theirs = probe3d_convnext_forward(convnext.visual.trunk, images)
    assert ours.shape == theirs.shape == (2, 320, -(-size[0] // 16), -(-size[1] // 16))
    assert tower.readout.rule == "probe3d-convnext" and tower.readout.dim == 320
    torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-5)


def test_center_pad_pads_each_side_to_its_next_multiple():
    images = torch.ones(1, 1, 5, 8)
    padded = features.center_pad(images, (4, 4))
    assert padded.shape == (1, 1, 8, 8)  # Probe3D pads the divisible width too: 8 x 12
    rows = padded[0, 0].sum(dim=1)
    assert rows.tolist() == [0, 8, 8, 8, 8, 8, 0, 0]  # 1 row on top, 2 at the bottom
    divisible = images[..., :4, :]
    assert features.center_pad(divisible, (4, 4)) is divisible
    assert torch.equal(features.center_pad(padded, (4, 4)), padded)


@pytest.mark.parametrize(
    ("model", "arch", "dim", "stride", "rule"),
    [
        ("vit", "ViT-S-32-alt", 384, 32, "probe3d-clip"),
        ("rn", "tiny-rn", 512, 16, "cnn-last-stage"),
        ("resnet18", "timm:resnet18", 512, 16, "cnn-last-stage"),
    ],
)
def test_feature_maps_have_the_readout_dim_and_a_ceil_grid(request, model, arch, dim, stride, rule):
    tower = DenseTower(request.getfixturevalue(model), arch, "cpu")
    out = tower(_images(3, 70, 100))
    assert tower.readout.dim == dim and tower.readout.stride == stride
    assert tower.readout.rule == rule
    assert (
        out.shape == (3, dim, -(-70 // stride), -(-100 // stride)) == (3, dim, *tower.grid(70, 100))
    )
    assert out.dtype == torch.float32 and torch.isfinite(out).all()


def test_timm_vit_at_another_size_equals_timms_own_resampling():
    net = _timm("vit_tiny_patch16_224").net  # a fixed input size: its patch embedding is strict
    reference = timm.create_model(
        "vit_tiny_patch16_224", pretrained=False, dynamic_img_size=True
    ).eval()
    reference.load_state_dict(net.state_dict())
    images = _images(2, 96, 128)
    tower = DenseTower(TimmClassifier(net), "timm:vit_tiny_patch16_224", "cpu")
    ours = tower(images)
    with torch.no_grad():
        theirs = reference.forward_intermediates(
            images, indices=1, norm=False, intermediates_only=True
        )[0]
    assert tower.readout.rule == "timm-vit"
    assert ours.shape == (
        2,
        tower.readout.dim,
        96 // tower.readout.stride,
        128 // tower.readout.stride,
    )
    torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("model", "arch"), [("vit", "ViT-S-32-alt"), ("rn", "tiny-rn"), ("resnet18", "timm:resnet18")]
)
def test_an_images_features_do_not_depend_on_the_rest_of_its_batch(request, model, arch):
    tower = DenseTower(request.getfixturevalue(model), arch, "cpu", batch_size=8)
    images = _images(3, 72, 80, seed=2)
    together = tower(images)
    for i in range(3):
        torch.testing.assert_close(
            together[i : i + 1], tower(images[i : i + 1]), rtol=1e-5, atol=1e-5
        )
    chunked = DenseTower(request.getfixturevalue(model), arch, "cpu", batch_size=2)(images)
    torch.testing.assert_close(together, chunked, rtol=1e-5, atol=1e-5)


def _snapshot(model):
    return {name: value.detach().clone() for name, value in model.state_dict().items()}


def test_a_call_at_another_size_leaves_the_open_clip_vit_unchanged(vit):
    before, pos = _snapshot(vit), vit.visual.positional_embedding
    DenseTower(vit, "ViT-S-32-alt", "cpu")(_images(1, 200, 260))
    assert vit.visual.positional_embedding is pos
    assert pos.shape == (50, 384)
    after = _snapshot(vit)
    assert after.keys() == before.keys()
    assert all(torch.equal(before[name], after[name]) for name in before)
    # the model still runs at its own size only as before
    with torch.no_grad():
        assert vit.encode_image(_images(1, 224, 224)).shape == (1, 256)


def test_a_call_at_another_size_leaves_the_timm_vit_unchanged():
    model = _timm("vit_tiny_patch16_224")
    assert model.net.patch_embed.strict_img_size  # lent a resampled embedding, relaxed, restored
    before, pos = _snapshot(model), model.net.pos_embed
    DenseTower(model, "timm:vit_tiny_patch16_224", "cpu")(_images(1, 96, 128))
    assert model.net.pos_embed is pos and model.net.patch_embed.strict_img_size
    after = _snapshot(model)
    assert all(torch.equal(before[name], after[name]) for name in before)


@pytest.mark.parametrize("arch", ["ViT-S-32-alt", "convnext_tiny", "RN50"])
def test_tower_kind_agrees_with_the_pool_attributes(arch):
    model = _open_clip(arch, device="meta")  # no weights: the tower's modules decide
    assert features.tower_kind(model, arch) == attributes.open_clip_rules(arch, None)["tower"]


def test_tower_kind_of_timm_classifiers_agrees_with_the_pool_attributes(resnet18):
    assert features.tower_kind(resnet18) == attributes.timm_rules("timm:resnet18", None)["tower"]
    with torch.device("meta"):
        vit = _timm("vit_base_patch16_224")
    expected = attributes.timm_rules("timm:vit_base_patch16_224", None)["tower"]
    assert features.tower_kind(vit) == expected == "transformer"


def test_a_tower_no_rule_reads_is_an_error_naming_the_architecture():
    with torch.device("meta"):
        swin = _timm("swin_tiny_patch4_window7_224")  # a transformer, not a ViT
    with pytest.raises(VlstressError, match=r"timm:swin_tiny_patch4_window7_224.*SwinTransformer"):
        DenseTower(swin, "timm:swin_tiny_patch4_window7_224", "cpu")
    with pytest.raises(VlstressError, match=r"my-arch.*Linear"):
        DenseTower(torch.nn.Linear(2, 2), "my-arch", "cpu")
    with torch.device("meta"):  # a ViT over a ResNet's feature map: its patches are no pixels
        hybrid = _timm("vit_small_r26_s32_224")
    with pytest.raises(VlstressError, match=r"timm:vit_small_r26_s32_224: a hybrid ViT"):
        DenseTower(hybrid, "timm:vit_small_r26_s32_224", "cpu")


def test_normalized_images_equal_torchvisions_to_tensor_and_normalize():
    transforms = pytest.importorskip("torchvision.transforms")
    rng = np.random.default_rng(3)
    images = rng.integers(0, 256, size=(2, 6, 5, 3), dtype=np.uint8)
    for kind, norm in features.NORMALIZATIONS.items():
        reference = transforms.Compose(
            [transforms.ToTensor(), transforms.Normalize(mean=norm.mean, std=norm.std)]
        )
        expected = torch.stack([reference(image) for image in images])
        torch.testing.assert_close(features.normalized(images, norm), expected, msg=kind)
        as_float = features.normalized([image / 255.0 for image in images], norm)
        torch.testing.assert_close(as_float, expected)
    assert features.NORMALIZATIONS["scannet-1500"].mean == (0.5, 0.5, 0.5)
    assert features.NORMALIZATIONS["spair-71k"].std == (0.229, 0.224, 0.225)
    with pytest.raises(VlstressError, match=r"\[0, 1\]"):
        features.normalized(images[0].astype(np.float32), features.IMAGENET)
