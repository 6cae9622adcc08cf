"""The answer to RoCOCO's open question: do the semantic and visual contrastive losses help, and at
what cost?

One row per fine-tuned model and one for its base, from the aggregated summary: retrieval R@1
on the original gallery, the text stress-test (R@1 and false R@1 per caption set), the image
stress-test (R@1 and false R@1 per perturbation, mean over λ and seeds) and, where those suites
ran, zero-shot top-1 per test set and mean corruption accuracy. A second table gives each
fine-tuned model's change against its base (percentage points).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from vlstress.params import Params
from vlstress.report import records
from vlstress.suites.finetune.block import FinetuneParams

MISSING = "–"


# the table's groups, in this order
METHODS = (
    "SC/VC",
    "SC/VC + LoRA",
    "FLYP",
    "FLYP + LoRA",
    "standard",
    "standard + LoRA",
    "WiSE-FT",
)
LOSS_METHODS = {"flyp": "FLYP", "standard": "standard"}  # a labelled variant's loss -> method


@dataclass(frozen=True)
class Finetuned:
    variant: str
    slug: str  # the model entry evaluating the fine-tuned weights
    method: str  # one of METHODS
    settings: str  # what sets it apart within its method


def _condition(text: str) -> dict:
    return json.loads(text)


def columns_of(agg: pd.DataFrame) -> dict[str, pd.Series]:
    """Column title -> mean value per model slug."""
    out: dict[str, pd.Series] = {}

    def add(title: str, rows: pd.DataFrame) -> None:
        if not rows.empty:
            out[title] = rows.groupby("model")["mean"].mean()

    for direction in ("i2t", "t2i"):
        add(f"{direction} R@1 original", records.rows(agg, "retrieval", f"{direction}_R@1"))
    text = records.rows(agg, "text-stress")
    for condition in dict.fromkeys(text["condition_json"]):
        name = _condition(condition).get("set")
        for metric, short in (("i2t_R@1", "R@1"), ("i2t_false_R@1", "false R@1")):
            add(
                f"text {name} {short}",
                text[(text["condition_json"] == condition) & (text["metric"] == metric)],
            )
    image = records.rows(agg, "image-stress").assign(
        method=lambda f: f["condition_json"].map(lambda c: _condition(c).get("perturbation"))
    )
    for method in dict.fromkeys(image["method"]):
        for metric, short in (("t2i_R@1", "R@1"), ("t2i_false_R@1", "false R@1")):
            add(
                f"image {method} {short}",
                image[(image["method"] == method) & (image["metric"] == metric)],
            )
    zeroshot = records.rows(agg, "zeroshot", "top1")
    for dataset in dict.fromkeys(zeroshot["dataset"]):
        add(f"zero-shot {dataset} top-1", zeroshot[zeroshot["dataset"] == dataset])
    add("mean corruption top-1", records.rows(agg, "corruption", "top1"))
    return out


def comparison(
    agg: pd.DataFrame, base: str, finetuned: list[Finetuned]
) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """(values, changes against the base, notes): rows base + each fine-tuned model that has
    records."""
    columns = columns_of(agg)
    present = set(agg["model"])
    notes = []
    rows = [("base", "base", base, "")] if base in present else []
    if base not in present:
        notes.append(
            f"the base model {base!r} has no records: add it to `models` to compare against it"
        )
    for f in sorted(finetuned, key=lambda f: METHODS.index(f.method)):
        if f.slug in present:
            rows.append((f.method, f.variant, f.slug, f.settings))
        else:
            notes.append(f"fine-tuned model {f.slug!r} ({f.variant}) has no records yet")
    index = pd.MultiIndex.from_tuples(rows, names=["method", "variant", "model", "settings"])
    values = pd.DataFrame(
        {
            title: [series.get(slug, math.nan) for _, _, slug, _ in rows]
            for title, series in columns.items()
        },
        index=index,
    )
    changes = (
        values.sub(values.xs(base, level="model").iloc[0], axis=1).drop(
            index="base", level="method"
        )
        if base in present
        else values.iloc[0:0]
    )
    return values, changes, notes


def cells(frame: pd.DataFrame, signed: bool = False) -> pd.DataFrame:
    def cell(v: float) -> str:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return MISSING
        return f"{v:+.1f}" if signed else f"{v:.1f}"

    return frame.map(cell)


def finetuned_models(params: Params) -> list[Finetuned]:
    """The fine-tuned models of the params: a model whose `pretrained` is a variant's checkpoint
    (`results/finetune/<variant>/model.safetensors`), a labelled-image variant's (FLYP or
    standard: `results/finetune/labelled/<variant>/model.safetensors`) or a WiSE-FT alpha's
    (`results/finetune/wise/<alpha>/model.safetensors`)."""
    import os

    from vlstress.suites.finetune.paths import FINETUNED, LABELLED_FINETUNED, WISE

    block = params.block(FinetuneParams)
    made = {}
    for variant, spec in sorted(block.variants.items()):
        settings = f"w_sc {spec.w_sc:g}, w_vc {spec.w_vc:g}"
        method = "SC/VC"
        if spec.lora:
            method, settings = "SC/VC + LoRA", f"{settings}, rank {spec.lora}"
        made[FINETUNED.replace("{variant}", variant)] = (variant, method, settings)
    for variant, labelled in sorted(block.labelled.variants.items()):
        method, settings = LOSS_METHODS[labelled.loss], f"templates {block.labelled.templates}"
        if labelled.lora:
            method, settings = f"{method} + LoRA", f"{settings}, rank {labelled.lora}"
        made[LABELLED_FINETUNED.replace("{labelled}", variant)] = (variant, method, settings)
    # the path as the workflow writes it: the alpha as written in the params (1 or 1.0)
    for written, alpha in zip(params.values["finetune"]["wise"]["alphas"], block.wise.alphas):
        made[WISE.replace("{alpha}", str(written))] = (
            f"wise {alpha:g}",
            "WiSE-FT",
            f"alpha {alpha:g} towards {block.wise.of}",
        )
    found = []
    for path, (variant, method, settings) in made.items():
        found += [
            Finetuned(variant, slug, method, settings)
            for slug, model in params.models.items()
            if model.pretrained and os.path.normpath(model.pretrained) == os.path.normpath(path)
        ]
    return found


@dataclass(frozen=True)
class FinetuneTables:
    """The texts `vlstress finetune-table` writes, and the notes it logs."""

    markdown: str
    csv: str
    latex: str
    notes: list[str]


def finetune_tables(params: Params, params_files: list[Path], summary: Path) -> FinetuneTables:
    """Base against its fine-tuned variants from the aggregated summary: values, then changes
    against the base (Markdown), the values (CSV) and a LaTeX table, each with its provenance."""
    from vlstress import provenance
    from vlstress.io import dumps_json, sha256_file
    from vlstress.report.frames import latex_escape

    agg = pd.read_csv(summary, keep_default_na=False, na_values=[""], dtype={"condition_json": str})
    base = params.block(FinetuneParams).base.slug
    values, changes, notes = comparison(agg, base, finetuned_models(params))
    block = provenance.build(
        "finetune-table",
        {"params": [str(p) for p in params_files], "base": base, "notes": notes},
        inputs={str(summary): sha256_file(summary)},
    )
    caption = (
        f"Fine-tuning of {base}: base against its fine-tuned variants by method (CLIP loss + "
        "w_sc SC + w_vc VC on captioned images; FLYP: the CLIP loss on class prompts; standard: "
        "cross-entropy through a zero-shot-initialised head; every weight or LoRA adapters; "
        "WiSE-FT weight interpolation); R@1, false R@1 and top-1 in %"
    )
    text = (
        f"{caption}\n\n"
        f"{cells(values).reset_index().to_markdown(index=False, disable_numparse=True)}\n"
    )
    if not changes.empty:
        changes_md = (
            cells(changes, signed=True)
            .reset_index()
            .to_markdown(index=False, disable_numparse=True)
        )
        text += f"\nChange against the base (percentage points):\n\n{changes_md}\n"
    text += "".join(f"\n_Note: {n}._\n" for n in notes)
    latex = cells(values).reset_index()
    latex.columns = [latex_escape(str(c)) for c in latex.columns]
    latex = latex.map(lambda v: latex_escape(str(v)))
    body = latex.style.hide(axis="index").to_latex(
        hrules=True,
        caption=latex_escape(caption),
        label="tab:finetune",
        position="t",
        position_float="centering",
        environment="table*",
    )
    comment = "".join(f"% {line}\n" for line in dumps_json(block).splitlines())
    return FinetuneTables(
        markdown=f"{text}\n<!-- provenance\n{dumps_json(block)}-->\n",
        csv=values.reset_index().to_csv(index=False, lineterminator="\n"),
        latex=(
            "% generated by `vlstress finetune-table`; needs \\usepackage{booktabs}\n"
            f"{comment}{body}"
        ),
        notes=notes,
    )
