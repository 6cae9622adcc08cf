"""Where the image stress-tests keep their variants, as pure functions of the params (no stage
declaration: the embedding job reads them)."""

from __future__ import annotations

from vlstress.params import Params
from vlstress.workflow.spec import render_value

SUITE = "rococo_image"
VARIANT = "{method}_lam{lam}_seed{seed}"
VARIANT_DIR = f"data/image_variants/{VARIANT}"
VARIANT_EMB = f"image_variants/{VARIANT}.npy"  # inside the model's retrieval folder
AXIS_PARAMS = ("image_variants.methods", "image_variants.lams", "image_variants.seeds")


RECORD_NAME = "image-{method}-lam{lam}-seed{seed}.json"  # in the model's record folder


def variants(params: Params) -> list[dict[str, str]]:
    """Every variant the params make (methods x lams x seeds, in that order), each as its `method`,
    `lam` and `seed` printed as DVC prints the raw values (`${item}`: 1 stays "1", not "1.0");
    none when off."""
    if SUITE not in params.on:
        return []
    block = params.values["image_variants"]
    return [
        {"method": render_value(method), "lam": render_value(lam), "seed": render_value(seed)}
        for method in block["methods"]
        for lam in block["lams"]
        for seed in block["seeds"]
    ]


def variant_folders(params: Params) -> list[str]:
    """Every variant folder the params make (`variants` order)."""
    return [VARIANT_DIR.format(**variant) for variant in variants(params)]


def folders(params: Params) -> list[str]:
    return ["data/image_variants"] if SUITE in params.on else []


def shaping_params(params: Params) -> list[str]:
    return list(AXIS_PARAMS) if SUITE in params.on else []
