"""Supervised ImageNet classifiers from timm, as models of the registry (`arch: timm:<name>`).

A timm model has no text tower: its "image embedding" is its 1000 ImageNet-1k logits (not
normalised), and its classifier of a test set is a map from those 1000 classes to the set's
classes (`vlstress.suites.zeroshot.classifier`). Weights as for open_clip models:
- `pretrained: null`  -> seeded random init (the seed of the entry), labelled "random-init";
- a checkpoint path   -> timm's `load_checkpoint` (.pth / .safetensors state dict, strict);
- anything else       -> a timm pretrained tag of the architecture (`resnet50` + `a1_in1k` =
                         timm's `resnet50.a1_in1k`): the weights of its hub repository
                         (`timm/resnet50.a1_in1k`, revision main) fetched into the weight cache,
                         checked and pinned by `vlstress.embedding.hub` (`hub_repo`).
Preprocessing is each model's own (timm's `resolve_model_data_config` + `create_transform`,
evaluation mode): resize, centre crop, to tensor, normalise, as the attacks need it.
"""

from __future__ import annotations

from vlstress.errors import VlstressError

PREFIX = "timm:"
N_CLASSES = 1000  # the ImageNet-1k head every test set is mapped from


def name_of(arch: str) -> str:
    """The timm model name of a registry arch `timm:<name>`."""
    return arch.removeprefix(PREFIX)


def check(slug: str, arch: str, pretrained: str | None, weights_kind: str) -> None:
    """An unknown architecture or pretrained tag is an error naming the model and close names."""
    import timm

    name = name_of(arch)
    if not name or not timm.is_model(name) or "." in name:
        close = timm.list_models(f"{name.split('.')[0][:5]}*")[:8] if name else []
        hint = f" (similar: {', '.join(close)})" if close else ""
        raise VlstressError(
            f"model {slug!r}: unknown timm architecture {name!r}{hint}; see "
            "`python -c 'import timm; print(timm.list_models())'` (a pretrained tag goes in "
            "`pretrained`, not the arch)"
        )
    if weights_kind == "hub":
        tags = [found.split(".", 1)[1] for found in timm.list_pretrained(f"{name}.*")]
        if pretrained not in tags:
            raise VlstressError(
                f"model {slug!r}: {pretrained!r} is not a timm pretrained tag of {name} (known: "
                f"{', '.join(tags) or 'none'}); use a tag, a checkpoint path, or null for random "
                "init"
            )


def hub_repo(arch: str, pretrained: str) -> str | None:
    """The hub repository of a timm pretrained tag (`timm/<name>.<tag>` for timm's own); None for
    an unknown tag, or one whose weights come from an address of their own (timm fetches them)."""
    import timm

    cfg = timm.models.get_pretrained_cfg(f"{name_of(arch)}.{pretrained}")
    repo = getattr(cfg, "hf_hub_id", None) if cfg is not None else None
    return str(repo).partition("@")[0] if repo else None


def load(
    arch: str,
    pretrained: str | None,
    weights_kind: str,
    cache_dir: str | None,
    weights_file: str | None = None,
):
    """(classifier module with `encode_image` -> logits, preprocess): the caller seeds torch.
    `weights_file`: a hub tag's weights, from its snapshot in the weight cache (else timm fetches
    them)."""
    import timm
    import torch

    name = name_of(arch)
    if weights_kind == "hub" and weights_file is not None:
        net = timm.create_model(
            f"{name}.{pretrained}", pretrained=True, pretrained_cfg_overlay={"file": weights_file}
        )
    elif weights_kind == "hub":
        net = timm.create_model(f"{name}.{pretrained}", pretrained=True, cache_dir=cache_dir)
    elif weights_kind == "checkpoint":
        net = timm.create_model(name, pretrained=False, checkpoint_path=pretrained)
    else:
        net = timm.create_model(name, pretrained=False)
    if net.num_classes != N_CLASSES:
        raise VlstressError(
            f"timm model {name} has {net.num_classes} output classes, not ImageNet-1k's "
            f"{N_CLASSES}: its classes cannot be mapped to the test sets'"
        )
    config = timm.data.resolve_model_data_config(net)
    preprocess = timm.data.create_transform(**config, is_training=False)

    class ImageClassifier(torch.nn.Module):
        """A timm network behind the image-tower interface the engine calls."""

        class_logits = True  # features are logits: never L2-normalised (encoders.encode_images)

        def __init__(self):
            super().__init__()
            self.net = net

        def encode_image(self, images):
            return self.net(images)

        def forward(self, images):
            return self.net(images)

    return ImageClassifier().eval(), preprocess


def count_gflops(arch: str) -> tuple[int, float]:
    """(input size, GFLOPs per image) of a timm architecture: torch's FlopCounterMode over one
    forward of the model built on the meta device (no weights, no memory), two FLOPs per
    multiply-add (the convention of vlstress.cost.profile)."""
    import timm
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    name = name_of(arch)
    if not timm.is_model(name):
        raise VlstressError(f"unknown timm architecture {name!r} ({arch})")
    with torch.device("meta"):
        model = timm.create_model(name, pretrained=False).eval()
        config = timm.data.resolve_model_data_config(model)
        size = tuple(config["input_size"])
        counter = FlopCounterMode(display=False)
        with counter, torch.no_grad():
            model(torch.empty(1, *size))
    return int(size[-1]), counter.get_total_flops() / 1e9
