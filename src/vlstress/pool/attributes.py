"""What the papers group models by, derived from a registry entry (arch and weights) by rules and
tables: no model library is imported and no weights are read (the parameter counts are
`vlstress.pool.counts`, on torch's meta device; the card adds them).

Fields (`FIELDS`), each None where the rules cannot tell (never guessed):
- `family`: ResNet, ConvNeXt, ViT, EVA, SigLIP, SigLIP2, CoCa, MobileCLIP, PE-Core, ViTamin,
  NLLB-CLIP, LLaVA-1.5, LLaVA-NeXT; a timm classifier's from its name (`TIMM_FAMILIES`);
- `tower`: the image tower, `cnn`, `transformer` or `hybrid` (convolutions and attention:
  ViTamin, MobileCLIP's MCi), from open_clip's model config or the timm family;
- `params_image_m`, `params_text_m`: parameters of each tower in millions (counted);
- `resolution`: input side in pixels (open_clip's model config; timm's pretrained config);
- `pretrain_data`: the pretraining data the open_clip tag or timm tag names (`OPEN_CLIP_DATA`,
  `TIMM_DATA`); `samples_seen_b`: billions of samples seen where the tag says (`s34b` = 34);
- `loss`: clip, siglip, coca (open_clip) or supervised (a timm classifier trained on ImageNet
  labels only);
- `finetune_method`, `finetune_base`: of a checkpoint written by the fine-tuning suite (its
  sidecar names them).
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from vlstress.embedding.kinds import TIMM_PREFIX, model_kind
from vlstress.pool.fields import FIELDS

TOWERS = ("cnn", "transformer", "hybrid")
LOSSES = ("clip", "siglip", "coca", "supervised")
HF_HUB = "hf-hub:"

# open_clip architecture name -> family: the first pattern that matches (case-insensitive)
OPEN_CLIP_FAMILIES = (
    (r"^nllb-clip", "NLLB-CLIP"),
    (r"^eva", "EVA"),
    (r"siglip2", "SigLIP2"),
    (r"siglip", "SigLIP"),
    (r"^coca", "CoCa"),
    (r"^mobileclip", "MobileCLIP"),
    (r"^pe-core", "PE-Core"),
    (r"^vitamin", "ViTamin"),
    (r"^rn\d", "ResNet"),
    (r"^convnext", "ConvNeXt"),
    (r"(^|-)vit-", "ViT"),
)
# the timm model of an open_clip image tower -> tower kind (its name's start)
TIMM_TOWERS = (
    ("convnext", "cnn"),
    ("fastvit", "hybrid"),
    ("vitamin", "hybrid"),
    ("vit_", "transformer"),
    ("eva", "transformer"),
)
# open_clip pretrained tag -> pretraining data: the first pattern that matches the whole tag
OPEN_CLIP_DATA = (
    (r"openai", "WIT-400M"),
    (r"yfcc15m", "YFCC-15M"),
    (r"cc12m", "CC12M"),
    (r"laion400m_.*", "LAION-400M"),
    (r"mscoco_finetuned_laion2b_.*", "LAION-2B, fine-tuned on MS-COCO"),
    (r"laion2b(_.*)?", "LAION-2B"),
    (r"(frozen_)?laion5b_.*", "LAION-5B"),
    (r"laion_aesthetic_.*", "LAION-Aesthetics"),
    (r"datacomp_xl_.*|datacomp_s34b_.*|datacomp1b", "DataComp-1B"),
    (r"datacomp_l_.*", "DataComp-L"),
    (r"datacomp_m_.*", "DataComp-M"),
    (r"datacomp_s_.*", "DataComp-S"),
    (r"datacompdr(_lt)?", "DataCompDR-1B"),
    (r"dfn2b(_.*)?", "DFN-2B"),
    (r"dfn5b", "DFN-5B"),
    (r"dfndr2b", "DFNDR-2B"),
    (r"merged2b_.*", "Merged-2B"),
    (r"metaclip_400m", "MetaCLIP-400M"),
    (r"metaclip_fullcc", "MetaCLIP-2.5B"),
    (r"metaclip_altogether", "MetaCLIP-Altogether"),
    (r"metaclip2_worldwide", "MetaCLIP2-Worldwide"),
    (r"webli", "WebLI"),
)
COMMONPOOL = re.compile(r"commonpool_(s|m|l|xl)(?:_(basic|clip|image|laion|text))?_.*")
SAMPLES = re.compile(r"(?:^|_)s(\d+)([mb])(?=_|$)")
# timm name start -> (family, tower): the longest start that matches
TIMM_FAMILIES = {
    "resnet": ("ResNet", "cnn"),
    "resnetv2": ("ResNet", "cnn"),
    "wide_resnet": ("Wide ResNet", "cnn"),
    "resnext": ("ResNeXt", "cnn"),
    "seresnet": ("SE-ResNet", "cnn"),
    "legacy_seresnet": ("SE-ResNet", "cnn"),
    "seresnext": ("SE-ResNeXt", "cnn"),
    "legacy_seresnext": ("SE-ResNeXt", "cnn"),
    "senet": ("SENet", "cnn"),
    "legacy_senet": ("SENet", "cnn"),
    "densenet": ("DenseNet", "cnn"),
    "vgg": ("VGG", "cnn"),
    "inception_v3": ("Inception", "cnn"),
    "inception_v4": ("Inception", "cnn"),
    "inception_resnet": ("Inception-ResNet", "cnn"),
    "xception": ("Xception", "cnn"),
    "legacy_xception": ("Xception", "cnn"),
    "efficientnet": ("EfficientNet", "cnn"),
    "tf_efficientnet": ("EfficientNet", "cnn"),
    "mobilenet": ("MobileNet", "cnn"),
    "mnasnet": ("MnasNet", "cnn"),
    "regnet": ("RegNet", "cnn"),
    "dpn": ("DPN", "cnn"),
    "nasnet": ("NASNet", "cnn"),
    "pnasnet": ("NASNet", "cnn"),
    "convnext": ("ConvNeXt", "cnn"),
    "vit_": ("ViT", "transformer"),
    "deit": ("DeiT", "transformer"),
    "swin": ("Swin", "transformer"),
    "beit": ("BEiT", "transformer"),
    "eva": ("EVA", "transformer"),
}
# timm tag word -> pretraining data (the first data word of a tag is what it was pretrained on)
TIMM_DATA = {
    "in1k": "ImageNet-1k",
    "in12k": "ImageNet-12k",
    "in21k": "ImageNet-21k",
    "in22k": "ImageNet-21k",
    "ig1b": "IG-1B",
    "yfcc100m": "YFCC-100M",
    "jft": "JFT-300M",
    "laion2b": "LAION-2B",
    "openai": "WIT-400M",
}
IMAGENET = {"ImageNet-1k", "ImageNet-12k", "ImageNet-21k"}
# timm tag words of training without (only) ImageNet labels: self-supervised, semi-supervised
NOT_SUPERVISED = {"ssl", "swsl", "ns", "dino", "mae", "clip", "sam"}
# the LLaVA models of the hub the pool names: family, image side of the vision tower
LLAVA = {
    "llava-hf/llava-1.5-7b-hf": ("LLaVA-1.5", 336),
    "llava-hf/llava-1.5-13b-hf": ("LLaVA-1.5", 336),
    "llava-hf/llava-v1.6-vicuna-7b-hf": ("LLaVA-NeXT", 336),
    "llava-hf/llava-v1.6-vicuna-13b-hf": ("LLaVA-NeXT", 336),
    "llava-hf/llava-v1.6-mistral-7b-hf": ("LLaVA-NeXT", 336),
    "llava-hf/llava-v1.6-34b-hf": ("LLaVA-NeXT", 336),
}
# the fine-tuning suite's checkpoint sidecar: its `training.loss` -> method
FINETUNE_LOSSES = {"sc_vc": "sc_vc", "flyp": "flyp", "standard": "standard"}


def empty() -> dict[str, Any]:
    return dict.fromkeys(FIELDS)


def _first(patterns, name: str, *, whole: bool = False) -> str | None:
    for pattern, value in patterns:
        match = re.fullmatch if whole else re.search
        if match(pattern, name, re.IGNORECASE):
            return value
    return None


@cache
def open_clip_config(arch: str) -> dict[str, Any] | None:
    """The model config JSON open_clip ships for `arch` (read from its folder, open_clip not
    imported), or None."""
    found = importlib.util.find_spec("open_clip")
    if found is None or found.origin is None:
        return None
    path = Path(found.origin).parent / "model_configs" / f"{arch}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def open_clip_tower(config: Mapping[str, Any] | None) -> str | None:
    vision = (config or {}).get("vision_cfg") or {}
    if isinstance(vision.get("layers"), (list, tuple)):
        return "cnn"  # CLIP's modified ResNet
    timm_name = vision.get("timm_model_name")
    if timm_name:
        return next((kind for start, kind in TIMM_TOWERS if timm_name.startswith(start)), None)
    return "transformer" if vision.get("patch_size") else None


def open_clip_resolution(config: Mapping[str, Any] | None) -> int | None:
    size = ((config or {}).get("vision_cfg") or {}).get("image_size")
    if isinstance(size, (list, tuple)):
        return int(max(size))
    return int(size) if isinstance(size, int) else None


def open_clip_data(tag: str | None) -> str | None:
    if not tag:
        return None
    pool = COMMONPOOL.fullmatch(tag)
    if pool:
        size, kept = pool.groups()
        return f"CommonPool-{size.upper()}" + (f" ({kept} filter)" if kept else "")
    return _first(OPEN_CLIP_DATA, tag, whole=True)


def samples_seen(tag: str | None) -> float | None:
    """Billions of samples seen, where the tag says it (`s34b` = 34.0, `s128m` = 0.128)."""
    found = SAMPLES.search(tag or "")
    if not found:
        return None
    number, unit = int(found.group(1)), found.group(2)
    return float(number) if unit == "b" else number / 1000


def open_clip_loss(arch: str) -> str | None:
    name = arch.lower()
    if name.startswith("coca"):
        return "coca"
    if "siglip" in name:
        return "siglip"
    if name.startswith("mobileclip"):
        return None  # the CLIP loss and distillation from an ensemble of teachers
    return "clip" if _first(OPEN_CLIP_FAMILIES, arch) else None


def open_clip_rules(arch: str, tag: str | None) -> dict[str, Any]:
    found = empty()
    if arch.startswith(HF_HUB):  # a hub repository: its name only (no config here)
        name = arch.removeprefix(HF_HUB).split("/")[-1]
        found.update(family=_first(OPEN_CLIP_FAMILIES, name), loss=open_clip_loss(name))
        return found
    config = open_clip_config(arch)
    found.update(
        family=_first(OPEN_CLIP_FAMILIES, arch),
        tower=open_clip_tower(config),
        resolution=open_clip_resolution(config),
        pretrain_data=open_clip_data(tag),
        samples_seen_b=samples_seen(tag),
        loss=open_clip_loss(arch),
    )
    return found


def timm_family(name: str) -> tuple[str, str] | None:
    starts = [start for start in TIMM_FAMILIES if name.startswith(start)]
    return TIMM_FAMILIES[max(starts, key=len)] if starts else None


def timm_data(tag: str | None) -> tuple[str | None, str | None]:
    """(pretraining data, loss) of a timm tag: its first data word; `supervised` when every data
    word is ImageNet's and no word names another kind of training."""
    words = re.split(r"[_-]", tag or "")
    data = [TIMM_DATA[word] for word in words if word in TIMM_DATA]
    if not data:
        return None, None
    supervised = set(data) <= IMAGENET and not NOT_SUPERVISED & set(words)
    return data[0], "supervised" if supervised else None


def timm_rules(arch: str, tag: str | None) -> dict[str, Any]:
    found = empty()
    family = timm_family(arch.removeprefix(TIMM_PREFIX))
    data, loss = timm_data(tag)
    found.update(
        family=family[0] if family else None,
        tower=family[1] if family else None,
        pretrain_data=data,
        loss=loss,
    )
    return found


def llava_rules(pretrained: str | None) -> dict[str, Any]:
    found = empty()
    family, side = LLAVA.get(str(pretrained), (None, None))
    found.update(family=family, resolution=side, tower="transformer" if family else None)
    return found


def from_sidecar(arch: str, sidecar: Mapping[str, Any]) -> dict[str, Any]:
    """The attributes of a fine-tuned checkpoint from the sidecar the fine-tuning suite writes:
    its base's (arch and weights) plus the method and the base's slug."""
    base = sidecar.get("base") or {}
    base_weights = base.get("pretrained") if base.get("weights") == "hub" else None
    found = open_clip_rules(arch, base_weights)
    method: str | None
    if sidecar.get("kind") == "wise-ft-checkpoint":
        method = "wise-ft"
    else:
        training = sidecar.get("training") or {}
        method = FINETUNE_LOSSES.get(str(training.get("loss")))
        if method and training.get("lora_rank"):
            method += "+lora"
    found.update(finetune_method=method, finetune_base=base.get("slug"))
    return found


def derive(
    arch: str, pretrained: str | None, weights_kind: str, sidecar: Mapping | None = None
) -> dict[str, Any]:
    """Every field the rules can tell of a registry entry (the counts stay None: `with_counts`).
    `weights_kind` as `ModelSpec.weights_kind`; `sidecar`: a checkpoint's sidecar, if any."""
    kind = model_kind(arch)
    tag = pretrained if weights_kind == "hub" else None
    if kind == "llava":
        return llava_rules(pretrained if weights_kind == "hub" else None)
    if kind == "timm":
        return timm_rules(arch, tag)
    if weights_kind == "checkpoint" and sidecar is not None:
        return from_sidecar(arch, sidecar)
    return open_clip_rules(arch, None if arch.startswith(HF_HUB) else tag)


def millions(count: int | None) -> float | None:
    return None if count is None else round(count / 1e6, 3)


def with_counts(
    found: dict[str, Any],
    image: int | None,
    text: int | None,
    side: int | None = None,
) -> dict[str, Any]:
    """`found` with the towers' parameters (counts, in millions) and a counted input side (a timm
    tag's pretrained config says it; open_clip's model config already did)."""
    return {
        **found,
        "params_image_m": millions(image),
        "params_text_m": millions(text),
        "resolution": side if side is not None else found["resolution"],
    }


def of(
    arch: str,
    pretrained: str | None,
    weights_kind: str,
    *,
    model=None,
    count: bool = False,
) -> dict[str, Any]:
    """The attributes of a registry entry (`vlstress.embedding.models.describe`): the rules, the
    sidecar of a checkpoint (fine-tuning), and the towers' parameters from the loaded `model`, or
    with `count`, counted on the meta device where the model library is imported already (the
    card of a hub tag or a timm model: the card of a random-init or checkpoint open_clip model
    imports no torch, and leaves them None)."""
    import sys

    from vlstress.io import sidecar

    side_file = sidecar(Path(pretrained)) if weights_kind == "checkpoint" and pretrained else None
    notes = None
    if side_file is not None and side_file.is_file():
        try:
            notes = json.loads(side_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            notes = None
    found = derive(arch, pretrained, weights_kind, notes if isinstance(notes, dict) else None)
    if model is not None:
        from vlstress.pool import counts

        return with_counts(found, *counts.loaded_towers(model), counts.loaded_resolution(model))
    library = {"open_clip": "open_clip", "timm": "timm"}.get(model_kind(arch))
    if count and library in sys.modules:
        from vlstress.pool import counts

        return with_counts(
            found, *counts.entry(arch, pretrained if weights_kind == "hub" else None)
        )
    return found
