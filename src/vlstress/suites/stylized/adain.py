"""AdaIN style transfer (Huang & Belongie 2017), the method Stylized-ImageNet was made with
(Geirhos et al. 2019), with the networks of naoto0804/pytorch-AdaIN (MIT): the normalised VGG-19
encoder up to relu4_1 and its decoder.

    t = AdaIN(f(content), f(style)) = sigma(f_s) (f_c - mu(f_c)) / sigma(f_c) + mu(f_s)
    out = decoder(alpha t + (1 - alpha) f(content))

Weights (`weights`):
- `null`: seeded random init of both networks (offline; labelled `random-init (seed S)`
  everywhere: the images are then not stylised in any meaningful way, only the pipeline runs);
- a URL folder (the release, `RELEASE`) or a local folder holding `vgg_normalised.pth` and
  `decoder.pth`. Files are fetched with vlstress.download (resumable, cached) and checked against
  the pin file: the first download records each file's sha256 there, every later one must match
  (commit the pin file so that a colleague or a cluster gets the same bytes).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vlstress.errors import VlstressError

RELEASE = "https://github.com/naoto0804/pytorch-AdaIN/releases/download/v0.0.0/"
FILES = {"encoder": "vgg_normalised.pth", "decoder": "decoder.pth"}
ENCODER_LAYERS = 31  # vgg_normalised up to relu4_1, as pytorch-AdaIN's test.py keeps it
EPS = 1e-5  # pytorch-AdaIN's calc_mean_std


def _conv(cin: int, cout: int):
    import torch.nn as nn

    return [nn.ReflectionPad2d((1, 1, 1, 1)), nn.Conv2d(cin, cout, (3, 3)), nn.ReLU()]


def encoder():
    """The normalised VGG-19 of pytorch-AdaIN's net.py, whole (its state dict loads as released);
    `encode` runs its first ENCODER_LAYERS layers."""
    import torch.nn as nn

    def pool():
        return nn.MaxPool2d((2, 2), (2, 2), (0, 0), ceil_mode=True)

    layers: list[nn.Module] = [nn.Conv2d(3, 3, (1, 1))]
    for cin, cout, pooled in (
        (3, 64, False), (64, 64, True),
        (64, 128, False), (128, 128, True),
        (128, 256, False), (256, 256, False), (256, 256, False), (256, 256, True),
        (256, 512, False), (512, 512, False), (512, 512, False), (512, 512, True),
        (512, 512, False), (512, 512, False), (512, 512, False), (512, 512, False),
    ):  # fmt: skip
        layers += _conv(cin, cout) + ([pool()] if pooled else [])
    return nn.Sequential(*layers)


def decoder():
    """pytorch-AdaIN's decoder: relu4_1 features (512 channels) back to an RGB image."""
    import torch.nn as nn

    def up():
        return nn.Upsample(scale_factor=2, mode="nearest")

    layers = _conv(512, 256) + [up()]
    layers += _conv(256, 256) + _conv(256, 256) + _conv(256, 256)
    layers += _conv(256, 128) + [up()] + _conv(128, 128) + _conv(128, 64) + [up()]
    layers += _conv(64, 64) + [nn.ReflectionPad2d((1, 1, 1, 1)), nn.Conv2d(64, 3, (3, 3))]
    return nn.Sequential(*layers)


def mean_std(feat, eps: float = EPS):
    """Per-sample, per-channel mean and std (unbiased variance + eps, as pytorch-AdaIN)."""
    n, c = feat.shape[:2]
    var = feat.reshape(n, c, -1).var(dim=2) + eps
    return feat.reshape(n, c, -1).mean(dim=2).view(n, c, 1, 1), var.sqrt().view(n, c, 1, 1)


def adain(content_feat, style_feat):
    """Adaptive instance normalisation: the content features with the style's channel statistics."""
    style_mean, style_std = mean_std(style_feat)
    content_mean, content_std = mean_std(content_feat)
    return (content_feat - content_mean) / content_std * style_std + style_mean


class Stylizer:
    """The two networks on a device; `__call__(content, style, alpha)` on [0, 1] batches."""

    def __init__(self, encoder_net, decoder_net, device: str, described: dict[str, Any]):
        self.encode = encoder_net[:ENCODER_LAYERS].to(device).eval()
        self.decode = decoder_net.to(device).eval()
        self.device = device
        self.described = described

    def __call__(self, content, style, alpha: float):
        import torch

        if not 0.0 <= alpha <= 1.0:
            raise VlstressError(f"AdaIN alpha must be in [0, 1], got {alpha}")
        with torch.no_grad():
            content_feat = self.encode(content.to(self.device))
            target = adain(content_feat, self.encode(style.to(self.device)))
            target = alpha * target + (1 - alpha) * content_feat
            return self.decode(target).clamp(0.0, 1.0).cpu()


def read_pins(path: Path) -> dict[str, str]:
    if not path.is_file():
        return {}
    from vlstress.io import read_json

    pins = read_json(path, "AdaIN weight pins")
    if not isinstance(pins, dict) or not all(isinstance(v, str) for v in pins.values()):
        raise VlstressError(f"{path}: expected {{file name: sha256}}")
    return pins


def fetch_weights(source: str, pins_path: Path, cache_dir: Path) -> tuple[dict[str, Path], dict]:
    """Each network's file from `source` (URL folder or local folder), checked against the pins;
    a file without a pin is pinned now (the pin file is written atomically)."""
    from vlstress.download import fetch, join_url
    from vlstress.io import sha256_file, write_text

    pins = read_pins(pins_path)
    found, recorded = {}, {}
    for role, name in FILES.items():
        url = join_url(source, name)
        path = fetch(url, sha256=pins.get(name), cache_dir=cache_dir, desc=f"AdaIN {role}")
        found[role] = path
        recorded[name] = pins.get(name) or sha256_file(path)
    if recorded != pins:
        pinned = {**pins, **recorded}
        write_text(pins_path, json.dumps(pinned, indent=2, sort_keys=True) + "\n")
    return found, {"source": source, "sha256": recorded, "pins": str(pins_path)}


def load(weights: str | None, *, pins: Path, cache_dir: Path, seed: int, device: str) -> Stylizer:
    """The stylizer of `weights` (None: seeded random init)."""
    import torch

    torch.manual_seed(seed)  # random init is seeded; loaded weights overwrite it
    encoder_net, decoder_net = encoder(), decoder()
    if weights is None:
        # He init keeps the activations' scale through the 20-odd ReLU layers (PyTorch's default
        # shrinks them to a constant image): the random networks still map each content and
        # style to a different image, so the pipeline downstream sees varied inputs
        for net in (encoder_net, decoder_net):
            for module in net.modules():
                if isinstance(module, torch.nn.Conv2d):
                    torch.nn.init.kaiming_normal_(module.weight, nonlinearity="relu")
                    if module.bias is not None:
                        torch.nn.init.zeros_(module.bias)
        # and the last layer around mid-grey, so that the image is not clamped to black or white
        last = decoder_net[-1]
        with torch.no_grad():
            last.weight.mul_(0.1)
            last.bias.fill_(0.5)
        described = {"weights": "random-init", "weights_label": f"random-init (seed {seed})"}
        return Stylizer(encoder_net, decoder_net, device, described)
    files, record = fetch_weights(weights, pins, cache_dir)
    for role, net in (("encoder", encoder_net), ("decoder", decoder_net)):
        try:
            state = torch.load(files[role], map_location="cpu", weights_only=True)
            net.load_state_dict(state)
        except (RuntimeError, KeyError, ValueError, OSError) as exc:
            raise VlstressError(
                f"AdaIN {role} weights {files[role]} do not fit pytorch-AdaIN's network: {exc}"
            ) from None
    described = {"weights": "pytorch-AdaIN", "weights_label": "pytorch-AdaIN", **record}
    return Stylizer(encoder_net, decoder_net, device, described)
