"""Relative cost of open_clip architectures: GFLOPs per image and per caption, embedding width.

The table is open_clip's own profile of its architectures (`docs/model_profile.csv`, written by
its `src/open_clip_train/profiler.py` with fvcore at each model's native image size), columns
`model`, `image_size`, `embed_dim`, `image_gflops`, `text_gflops` copied verbatim:

- repository https://github.com/mlfoundations/open_clip, commit read
  `89fb801f1e6087880e951fc8354b8a2077b79c6d` (the file's last change `29b90b8`, "Add NLLB-CLIP
  with SigLIP models (#741)", 2023-11-22; git blob `b561623f54293be6c585c5caa7e645ccb91eee53`,
  sha256 of the file `6f0975464d02d31a4c7cfca79a100c47c0d01cf47222f4fa5b9bec5609677285`);
- licence MIT (open_clip's `LICENSE`; its notice is in `vlstress/data/published/SOURCES.md`).

Its "GFLOPs" count a multiply-add as two operations: ViT-B-32 is 8.82 per image here, the 4.4
GMACs usually quoted (ViT-B-16 35.13 = 4.0x, ViT-L-14 162.03 = 18.4x, RN50 12.22 = 1.4x). Only
ratios are used. An architecture outside the table is an error naming it, unless the caller
gives its figures (`vlstress cost --gflops ARCH=IMAGE,TEXT,DIM`). A timm classifier (`timm:<name>`)
is counted (`vlstress.embedding.timm_models.count_gflops`: torch's FlopCounterMode on the model
built on the meta device, at its own input size, two FLOPs per multiply-add as in the table:
resnet50 8.18, convnext_base 30.71 as open_clip's own row); no text tower, its "embedding" is its
1000 logits. The common architectures' counts are kept in `TIMM_TABLE`, so pricing them imports no
model library; `vlstress cost` counts any other before pricing (`timm_arch`).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from dataclasses import dataclass
from difflib import get_close_matches

from vlstress.embedding.kinds import TIMM_PREFIX
from vlstress.errors import VlstressError

SOURCE = "open_clip's docs/model_profile.csv at commit 89fb801"


@dataclass(frozen=True)
class ArchCost:
    arch: str
    image_size: int
    embed_dim: int
    image_gflops: float
    text_gflops: float
    # parameters of the whole model, millions (what a job holds in memory); None: not known
    mparams: float | None = None


_TABLE = """\
model,image_size,embed_dim,image_gflops,text_gflops,mparams
ViT-S-32-alt,224,256,2.29,1.27,43.22
ViT-S-32,224,384,2.29,3.38,63.09
ViT-M-32-alt,224,384,3.99,3.38,80.07
ViT-M-32,224,512,3.99,5.96,103.12
ViT-S-16-alt,224,256,9.2,1.27,42.4
ViT-S-16,224,384,9.2,3.38,62.26
ViT-B-32,224,512,8.82,5.96,151.28
ViT-B-32-quickgelu,224,512,8.82,5.96,151.28
convnext_tiny,224,1024,8.91,5.96,92.3
ViT-B-32-256,256,512,11.5,5.96,151.29
RN50,224,1024,12.22,5.96,102.01
RN50-quickgelu,224,1024,12.22,5.96,102.01
ViT-M-16-alt,224,384,15.98,3.38,78.98
ViT-M-16,224,512,15.98,5.96,102.02
vit_relpos_medium_patch16_cls_224,224,512,16.03,5.96,101.94
mt5-base-ViT-B-32,224,512,8.82,13.3,365.71
convnext_small,224,512,17.37,5.96,113.28
ViT-B-32-plus-256,256,640,15.56,9.27,210.3
RN101,224,512,19.54,5.96,119.69
RN101-quickgelu,224,512,19.54,5.96,119.69
vit_medium_patch16_gap_256,256,512,21.14,5.96,102.04
coca_ViT-B-32,224,512,9.19,5.96,253.56
convnext_base,224,512,30.71,5.96,151.52
swin_base_patch4_window7_224,224,640,30.86,9.27,178.56
ViT-B-16,224,512,35.13,5.96,149.62
ViT-B-16-quickgelu,224,512,35.13,5.96,149.62
EVA02-B-16,224,512,35.13,5.96,149.69
ViT-B-16-SigLIP,224,768,35.42,11.02,203.16
convnext_base_w,256,640,40.11,9.27,179.39
RN50x4,288,640,42.56,9.27,178.3
coca_roberta-ViT-B-32,224,512,8.82,13.12,420.37
ViT-B-16-plus,224,640,47.49,9.27,208.35
ViT-B-16-SigLIP-256,256,768,46.82,11.02,203.2
ViT-B-16-SigLIP-i18n-256,256,768,46.82,11.02,370.63
ViT-B-16-plus-240,240,640,54.76,9.27,208.38
convnext_base_w_320,320,640,62.67,9.27,179.39
convnext_large,224,768,68.72,13.3,321.06
coca_base,288,512,46.47,13.3,440.34
roberta-ViT-B-32,224,512,8.82,97.05,212.72
xlm-roberta-base-ViT-B-32,224,512,8.82,97.05,366.12
convnext_large_d,256,768,89.76,17.73,351.77
ViT-B-16-SigLIP-384,384,768,112.13,11.02,203.45
ViT-L-16,224,768,123.11,13.3,427.74
convnext_large_d_320,320,768,140.25,17.73,351.77
RN50x16,384,768,149.39,13.3,290.98
ViT-L-14-CLIPA,224,768,162.03,5.47,414.21
EVA02-L-14,224,768,162.0,13.3,427.76
ViT-L-14,224,768,162.03,13.3,427.62
ViT-L-14-quickgelu,224,768,162.03,13.3,427.62
convnext_xlarge,256,1024,159.14,39.24,653.89
ViT-L-16-SigLIP-256,256,1024,162.56,39.06,652.15
coca_ViT-L-14,224,768,163.64,13.3,638.45
ViT-B-16-SigLIP-512,512,768,216.24,11.02,203.79
ViT-SO400M-14-SigLIP,224,1152,220.35,13.19,877.36
ViT-L-14-280,280,768,258.49,13.3,427.76
ViT-L-16-320,320,768,258.63,13.3,427.95
ViT-H-16,224,1024,254.63,47.09,986.26
ViT-H-14-CLIPA,224,1024,334.59,19.43,968.24
nllb-clip-base,224,512,8.82,360.78,501.89
ViT-H-14,224,1024,334.59,47.09,986.11
ViT-H-14-quickgelu,224,1024,334.59,47.09,986.11
ViT-L-14-CLIPA-336,336,768,381.92,5.47,414.54
EVA02-L-14-336,336,768,381.86,13.3,428.08
ViT-L-14-336,336,768,381.92,13.3,427.94
ViT-L-16-SigLIP-384,384,1024,383.85,39.06,652.48
convnext_xxlarge,256,1024,395.94,47.09,1200.58
nllb-clip-base-siglip,384,768,112.13,360.78,507.47
mt5-xl-ViT-H-14,224,1024,334.59,179.45,2306.75
EVA01-g-14,224,1024,534.06,13.3,1136.44
RN50x64,448,1024,529.11,23.55,623.26
EVA01-g-14-plus,224,1024,534.06,47.09,1366.62
ViT-g-14,224,1024,534.06,47.09,1366.68
convnext_xxlarge_320,320,1024,618.65,47.09,1200.58
xlm-roberta-large-ViT-H-14,224,1024,334.59,336.42,1193.01
ViT-SO400M-14-SigLIP-384,384,1152,670.35,53.13,877.96
ViT-H-14-CLIPA-336,336,1024,781.45,19.43,968.64
ViT-bigG-14-CLIPA,224,1280,967.5,40.44,2517.22
ViT-H-14-378-quickgelu,378,1024,1006.96,47.09,986.71
ViT-bigG-14,224,1280,967.5,97.86,2539.57
nllb-clip-large,224,1024,334.59,1133.87,1399.22
nllb-clip-large-siglip,384,1152,670.35,1133.87,1195.5
ViT-e-14,224,1280,1981.35,110.1,4581.09
ViT-bigG-14-CLIPA-336,336,1280,2231.15,40.44,2517.76
EVA02-E-14,224,1024,2264.33,47.09,4704.59
EVA02-E-14-plus,224,1024,2264.33,97.86,5044.89
"""


def _parse(text: str) -> dict[str, ArchCost]:
    return {
        row["model"]: ArchCost(
            row["model"],
            int(row["image_size"]),
            int(row["embed_dim"]),
            float(row["image_gflops"]),
            float(row["text_gflops"]),
            float(row["mparams"]),
        )
        for row in csv.DictReader(io.StringIO(text))
    }


PROFILE: dict[str, ArchCost] = _parse(_TABLE)


def arch_cost(arch: str, extra: Mapping[str, ArchCost] | None = None) -> ArchCost:
    """The figures of an architecture: `extra` (the caller's), else the tables (open_clip's, and
    the counted timm classifiers')."""
    if extra and arch in extra:
        return extra[arch]
    if arch in PROFILE:
        return PROFILE[arch]
    if arch in TIMM_PROFILE:
        return TIMM_PROFILE[arch]
    close = get_close_matches(arch, list(PROFILE), n=3)
    hint = f" (close: {', '.join(close)})" if close else ""
    raise VlstressError(
        f"unknown architecture {arch!r}: not in the relative cost table, {SOURCE}, of "
        f"{len(PROFILE)} architectures{hint}; give its figures with "
        f"--gflops {arch}=IMAGE_GFLOPS,TEXT_GFLOPS,EMBED_DIM"
    )


# timm architecture, input size, GFLOPs per image (`timm_models.count_gflops` of each) and millions
# of parameters (counted on the meta device), timm 1.0.31
TIMM_TABLE = """\
resnet18,224,3.628,11.69
resnet50,224,8.178,25.56
resnet101,224,15.603,44.55
resnet152,224,23.027,60.19
wide_resnet50_2,224,22.796,68.88
densenet121,224,5.668,7.98
vgg16,224,30.941,138.36
efficientnet_b0,224,0.772,5.29
efficientnet_b3,288,3.178,12.23
mobilenetv3_large_100,224,0.433,5.48
convnext_tiny,224,8.911,28.59
convnext_base,224,30.709,88.59
vit_small_patch16_224,224,9.198,22.05
vit_base_patch16_224,224,35.128,86.57
vit_large_patch16_224,224,123.109,304.33
deit_base_patch16_224,224,35.128,86.57
swin_base_patch4_window7_224,224,30.862,87.77
beit_base_patch16_224,224,35.128,86.53
regnety_032,224,6.353,19.44
inception_v3,299,11.426,23.83
"""


def timm_arch(
    arch: str, image_size: int, image_gflops: float, mparams: float | None = None
) -> ArchCost:
    """The figures of a timm classifier (no text tower, 1000 logits)."""
    return ArchCost(arch, image_size, 1000, image_gflops, 0.0, mparams)


TIMM_PROFILE = {
    f"{TIMM_PREFIX}{name}": timm_arch(
        f"{TIMM_PREFIX}{name}", int(size), float(gflops), float(mparams)
    )
    for name, size, gflops, mparams in (line.split(",") for line in TIMM_TABLE.split())
}


def parse_override(text: str) -> ArchCost:
    """`ARCH=IMAGE,TEXT,DIM` (GFLOPs per image and per caption as in the table, embedding width)."""
    arch, sep, numbers = text.partition("=")
    parts = numbers.split(",")
    try:
        if not sep or not arch.strip() or len(parts) != 3:
            raise ValueError
        image, text_gflops, dim = float(parts[0]), float(parts[1]), int(parts[2])
        if image <= 0 or text_gflops <= 0 or dim <= 0:
            raise ValueError
    except ValueError:
        raise VlstressError(
            f"--gflops {text!r}: expected ARCH=IMAGE_GFLOPS,TEXT_GFLOPS,EMBED_DIM (positive "
            "numbers, e.g. ViT-B-32=8.82,5.96,512)"
        ) from None
    return ArchCost(arch.strip(), 0, dim, image, text_gflops)
