"""Dense features of a frozen image tower, read as Probe3D reads them (El Banani et al., CVPR 2024).

`DenseTower(model, arch, device)` wraps what `vlstress.embedding.models.load` returns (an
open_clip model, or the timm classifier of a `timm:` entry) and maps normalised images
(B, 3, H, W), any H and W, to feature maps (B, C, h, w). Its `readout` says which layer was read,
the stride of a feature cell, the feature dimension and the rule:

- `probe3d-clip` (open_clip ViT): the patch tokens of the last block, before the final norm
  (`ln_post`) and the projection (open_clip's `forward_intermediates`). Images are centre-padded
  to a multiple of the patch size; at another grid than the model's, the positional embeddings
  are resized bicubically (antialiased, align_corners=False, class token kept: Probe3D's
  `resize_pos_embed`) for that call only. h = ceil(H / patch).
- `probe3d-convnext` (ConvNeXt, in open_clip or timm): the last stage's output (stem, then the
  stages: Probe3D's `evals/models/convnext.py`), bilinearly resized to (H/16, W/16) after
  centre padding to a multiple of 16.
- `cnn-last-stage` (CLIP's modified ResNet, timm CNNs): Probe3D has no rule; the last stage's
  output before the attention pool or global pool (timm: `forward_features`, the unpooled map,
  which for some families ends in a norm or a 1x1 convolution: DenseNet's norm5, EfficientNet's
  conv_head), read as ConvNeXt is, so every CNN gives the same grid, h = ceil(H / 16).
- `timm-vit` (timm ViTs, in open_clip or timm): the patch tokens of the last block before the
  final norm (timm's `forward_intermediates`), positional embeddings resampled by timm's own
  rule (the same as Probe3D's) for that call only.
Any other tower is an error naming the architecture.

Padding: Probe3D's `center_padding` pads a whole extra patch on a side that is already a
multiple when the other side is not; here each side is padded to its next multiple (nothing
when it is one), so h = ceil(H / stride) always. The two agree whenever both sides need padding
or neither does (480x640, 512x512 and 800x800 at patch 14, 16 and 32 all do).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from vlstress.errors import VlstressError
from vlstress.pool import attributes

CNN_STRIDE = 16  # Probe3D's output grid for ConvNeXt, used for every CNN


@dataclass(frozen=True)
class Normalization:
    """The mean and std a protocol normalises [0, 1] RGB images with."""

    name: str
    mean: tuple[float, float, float]
    std: tuple[float, float, float]


SCANNET = Normalization("scannet", (0.5, 0.5, 0.5), (0.5, 0.5, 0.5))
IMAGENET = Normalization("imagenet", (0.485, 0.456, 0.406), (0.229, 0.224, 0.225))
# the dataset kind -> Probe3D's normalisation of its images
NORMALIZATIONS = {"scannet-1500": SCANNET, "navi": IMAGENET, "spair-71k": IMAGENET}


def normalized(images: Any, norm: Normalization, device: str = "cpu") -> torch.Tensor:
    """(B, 3, H, W) float32 normalised images from an H x W x 3 image, a B x H x W x 3 array or a
    sequence of same-size H x W x 3 images: uint8 (0..255) or float in [0, 1]."""
    array = np.stack(images) if isinstance(images, Sequence) else np.asarray(images)
    if array.ndim == 3:
        array = array[None]
    if array.ndim != 4 or array.shape[-1] != 3:
        raise VlstressError(f"images of shape {array.shape}: expected H x W x 3 (RGB) images")
    if array.dtype == np.uint8:
        scaled = torch.from_numpy(array).to(device, torch.float32) / 255
    elif np.issubdtype(array.dtype, np.floating):
        if array.size and (array.min() < 0 or array.max() > 1):
            raise VlstressError(
                f"float images must lie in [0, 1] (found {array.min():g}..{array.max():g})"
            )
        scaled = torch.from_numpy(array).to(device, torch.float32)
    else:
        raise VlstressError(f"images of dtype {array.dtype}: expected uint8 or float in [0, 1]")
    mean = torch.tensor(norm.mean, device=device).view(1, 3, 1, 1)
    std = torch.tensor(norm.std, device=device).view(1, 3, 1, 1)
    return (scaled.permute(0, 3, 1, 2) - mean) / std


@dataclass(frozen=True)
class Readout:
    """How a tower's dense features were read (for provenance)."""

    arch: str
    tower: str  # cnn | transformer
    layer: str  # the module whose output is read
    stride: int  # input pixels per feature cell
    dim: int  # feature channels
    rule: str  # probe3d-clip | probe3d-convnext | cnn-last-stage | timm-vit

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def center_pad(images: torch.Tensor, multiple: tuple[int, int]) -> torch.Tensor:
    """Zero-pad (B, C, H, W) images evenly on both sides (the extra pixel bottom / right) to the
    next multiple of (mh, mw)."""
    height, width = images.shape[-2:]
    pad_h, pad_w = -height % multiple[0], -width % multiple[1]
    if not pad_h and not pad_w:
        return images
    top, left = pad_h // 2, pad_w // 2
    return F.pad(images, (left, pad_w - left, top, pad_h - top))


def resize_pos_embed(pos_embed: torch.Tensor, grid: tuple[int, int], hw: tuple[int, int]):
    """An open_clip positional embedding (1 + gh * gw, C) for a (h, w) grid: the class token's
    row kept, the grid's resized bicubically (Probe3D's `resize_pos_embed`)."""
    if tuple(grid) == tuple(hw):
        return pos_embed
    cls_embed, patches = pos_embed[:1], pos_embed[1:]
    patches = patches.reshape(1, grid[0], grid[1], -1).permute(0, 3, 1, 2)
    patches = F.interpolate(patches, hw, mode="bicubic", align_corners=False, antialias=True)
    return torch.cat([cls_embed, patches.permute(0, 2, 3, 1).reshape(hw[0] * hw[1], -1)])


class _Call(nn.Module):
    """A module's method as a forward, so `functional_call` can lend it other tensors for one
    call (the module itself is left as it was)."""

    def __init__(self, module: nn.Module, method: str, **kwargs: Any):
        super().__init__()
        self.module = module
        self.method = method
        self.kwargs = kwargs

    def forward(self, images: torch.Tensor):
        return getattr(self.module, self.method)(images, **self.kwargs)


def _with(module: nn.Module, method: str, lent: dict[str, torch.Tensor], images, **kwargs):
    call = _Call(module, method, **kwargs)
    lent = {f"module.{name}": value for name, value in lent.items()}
    return torch.func.functional_call(call, lent, (images,), strict=False)


Reader = Callable[[torch.Tensor], torch.Tensor]


def _open_clip_vit(visual, arch: str) -> tuple[Readout, Reader]:
    patch = tuple(visual.patch_size)
    last = len(visual.transformer.resblocks) - 1

    def read(images: torch.Tensor) -> torch.Tensor:
        images = center_pad(images, patch)
        hw = (images.shape[-2] // patch[0], images.shape[-1] // patch[1])
        pos = resize_pos_embed(visual.positional_embedding, visual.grid_size, hw)
        lent = {} if pos is visual.positional_embedding else {"positional_embedding": pos}
        out = _with(
            visual,
            "forward_intermediates",
            lent,
            images,
            indices=[last],
            stop_early=True,
            intermediates_only=True,
        )
        return out["image_intermediates"][0]

    layer = f"visual.transformer.resblocks.{last} (before ln_post)"
    readout = Readout(
        arch, "transformer", layer, patch[0], visual.transformer.width, "probe3d-clip"
    )
    return readout, read


def _timm_vit(net, arch: str, where: str) -> tuple[Readout, Reader]:
    from timm.layers import resample_abs_pos_embed

    patch = tuple(net.patch_embed.patch_size)
    last = len(net.blocks) - 1

    def read(images: torch.Tensor) -> torch.Tensor:
        images = center_pad(images, patch)
        hw = (images.shape[-2] // patch[0], images.shape[-1] // patch[1])
        native = tuple(net.patch_embed.grid_size) == hw
        lent = {}
        if not (native or net.dynamic_img_size or net.pos_embed is None):
            prefix = 0 if net.no_embed_class else net.num_prefix_tokens
            lent["pos_embed"] = resample_abs_pos_embed(
                net.pos_embed, hw, net.patch_embed.grid_size, num_prefix_tokens=prefix
            )
        # a fixed-size patch embedding rejects other sizes: relaxed for this call only
        strict = net.patch_embed.strict_img_size
        net.patch_embed.strict_img_size = strict and native
        try:
            out = _with(
                net,
                "forward_intermediates",
                lent,
                images,
                indices=[last],
                norm=False,
                stop_early=True,
                intermediates_only=True,
            )
        finally:
            net.patch_embed.strict_img_size = strict
        return out[0]

    layer = f"{where}.blocks.{last} (before the final norm)"
    return Readout(arch, "transformer", layer, patch[0], net.embed_dim, "timm-vit"), read


def _resized(read: Reader) -> Reader:
    """A CNN's reader on images centre-padded to a multiple of 16, its output resized bilinearly to
    (H / 16, W / 16) (Probe3D's ConvNeXt rule)."""

    def resized(images: torch.Tensor) -> torch.Tensor:
        images = center_pad(images, (CNN_STRIDE, CNN_STRIDE))
        hw = (images.shape[-2] // CNN_STRIDE, images.shape[-1] // CNN_STRIDE)
        return F.interpolate(read(images), hw, mode="bilinear")

    return resized


def _modified_resnet(visual, arch: str) -> tuple[Readout, Reader]:
    def read(images: torch.Tensor) -> torch.Tensor:
        x = visual.stem(images)
        for stage in (visual.layer1, visual.layer2, visual.layer3, visual.layer4):
            x = stage(x)
        return x

    dim = visual.layer4[-1].bn3.num_features
    layer = "visual.layer4 (before attnpool)"
    return Readout(arch, "cnn", layer, CNN_STRIDE, dim, "cnn-last-stage"), _resized(read)


def _timm_cnn(net, arch: str, where: str) -> tuple[Readout, Reader]:
    from timm.models.convnext import ConvNeXt

    if isinstance(net, ConvNeXt):

        def read(images: torch.Tensor) -> torch.Tensor:
            x = net.stem(images)
            for stage in net.stages:
                x = stage(x)
            return x

        layer = f"{where}.stages.{len(net.stages) - 1}"
        readout = Readout(arch, "cnn", layer, CNN_STRIDE, net.num_features, "probe3d-convnext")
        return readout, _resized(read)
    layer = f"{where}.forward_features (before the global pool)"
    readout = Readout(arch, "cnn", layer, CNN_STRIDE, net.num_features, "cnn-last-stage")
    return readout, _resized(net.forward_features)


def timm_tower(name: str) -> str | None:
    """The tower kind of a timm architecture by vlstress.pool.attributes' tables (None: unknown)."""
    family = attributes.timm_family(name)
    if family is not None:
        return family[1]
    return next((kind for start, kind in attributes.TIMM_TOWERS if name.startswith(start)), None)


def _timm(net, arch: str, where: str) -> tuple[Readout, Reader]:
    from timm.layers import HybridEmbed
    from timm.models.vision_transformer import VisionTransformer

    if isinstance(net, VisionTransformer) and isinstance(net.patch_embed, HybridEmbed):
        # its patches are cells of a CNN's feature map, not of pixels: no stride in pixels to read
        raise VlstressError(
            f"model {arch}: a hybrid ViT (a CNN stem under a transformer): no rule reads dense "
            "features of its image tower; readable: open_clip ViTs, CLIP's modified ResNets, "
            "ConvNeXts, timm CNNs and timm ViTs"
        )
    if isinstance(net, VisionTransformer):
        return _timm_vit(net, arch, where)
    name = str((getattr(net, "pretrained_cfg", None) or {}).get("architecture") or "")
    if timm_tower(name) == "cnn":
        return _timm_cnn(net, arch, where)
    raise VlstressError(
        f"model {arch}: no rule reads dense features of its image tower (timm {name or '?'}, "
        f"{type(net).__name__}, tower {timm_tower(name) or 'unknown'}); readable: open_clip "
        "ViTs, CLIP's modified ResNets, ConvNeXts, timm CNNs and timm ViTs"
    )


def _reader(model, arch: str) -> tuple[Readout, Reader]:
    from open_clip.modified_resnet import ModifiedResNet
    from open_clip.timm_model import TimmModel
    from open_clip.transformer import VisionTransformer

    visual = getattr(model, "visual", None)
    if isinstance(visual, VisionTransformer):
        return _open_clip_vit(visual, arch)
    if isinstance(visual, ModifiedResNet):
        return _modified_resnet(visual, arch)
    if isinstance(visual, TimmModel):
        return _timm(visual.trunk, arch, "visual.trunk")
    net = getattr(model, "net", None)  # a `timm:` classifier (vlstress.embedding.timm_models)
    if visual is None and isinstance(net, nn.Module):
        return _timm(net, arch, "net")
    found = type(visual if visual is not None else model).__name__
    raise VlstressError(
        f"model {arch}: no rule reads dense features of its image tower ({found}); readable: "
        "open_clip ViTs, CLIP's modified ResNets, ConvNeXts, timm CNNs and timm ViTs"
    )


def tower_kind(model, arch: str = "?") -> str:
    """`cnn` or `transformer`: the image tower of an open_clip model or a `timm:` classifier
    (as vlstress.pool.attributes' `tower`); a tower no rule reads is an error."""
    return _reader(model, arch)[0].tower


class DenseTower:
    """Dense features (B, C, h, w) of a frozen image tower, float32, without gradients, in
    batches of at most `batch_size` images (each image's features do not depend on the others)."""

    def __init__(self, model, arch: str, device: str, batch_size: int = 16):
        self.readout, self._read = _reader(model, arch)
        self.device = device
        self.batch_size = batch_size
        model.eval()  # frozen: batch norm statistics and dropout as at inference
        dtypes = {p.dtype for p in model.parameters()}
        if dtypes - {torch.float32}:
            raise VlstressError(
                f"model {arch}: dense features are read in float32; its parameters are "
                f"{sorted(map(str, dtypes))}"
            )

    def __call__(self, images: torch.Tensor) -> torch.Tensor:
        if images.ndim != 4 or images.shape[1] != 3:
            raise VlstressError(f"images of shape {tuple(images.shape)}: expected (B, 3, H, W)")
        with torch.no_grad():
            chunks = [
                self._read(images[start : start + self.batch_size].to(self.device, torch.float32))
                for start in range(0, len(images), self.batch_size)
            ]
        return torch.cat(chunks)

    def grid(self, height: int, width: int) -> tuple[int, int]:
        """The feature grid (h, w) of an H x W image."""
        stride = self.readout.stride
        return math.ceil(height / stride), math.ceil(width / stride)


def load_tower(spec, device: str, batch_size: int = 16) -> DenseTower:
    """The dense tower of a registry model (`vlstress.embedding.models.ModelSpec`)."""
    from vlstress.embedding import models

    model, _, _ = models.load(spec, device)
    return DenseTower(model, spec.arch, device, batch_size)
