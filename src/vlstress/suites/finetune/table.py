"""The answer to RoCOCO's open question: do the semantic and visual contrastive losses help, and at
what cost?

One row per fine-tuned model and one for its base, from the aggregated summary: retrieval R@1
on the original gallery, the text stress-test (R@1 and false R@1 per caption set), the image
stress-test (R@1 and false R@1 per perturbation, mean over λ and seeds) and, where those suites
ran, zero-shot top-1 per test set and mean corruption accuracy, with each fine-tuned model's
change against its base (percentage points). A zero-shot top-1 that is one share of a test set's n
images (one condition of the set) shows its 95% Wilson interval `[lo, hi]` over them, with n taken
from the long summary (`counts`); a mean over sets or conditions (mean corruption top-1) and a
change against the base (two shares of the same images) have none.

The Markdown and LaTeX tables are transposed (a row per measure, a column per model: as narrow as
the number of variants) under a legend of the variants (method, settings, in how many measures a
variant equals its base); a LoRA variant that leaves most measures as its base had them gets a
note saying why, from its params (the adapters' tower and layers, their zero start, the steps and
learning rate). The CSV keeps one row per model and a column per measure.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from vlstress.params import Params
from vlstress.report import records
from vlstress.report.frames import share_cell
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
    lora: int = 0  # LoRA rank (0: every weight trained, or not trained: WiSE-FT)


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
        add(zeroshot_title(dataset), zeroshot[zeroshot["dataset"] == dataset])
    add("mean corruption top-1", records.rows(agg, "corruption", "top1"))
    return out


def zeroshot_title(dataset: str) -> str:
    return f"zero-shot {dataset} top-1"


def top1_images(agg: pd.DataFrame, long: pd.DataFrame | None) -> dict[str, dict[str, float]]:
    """Column title -> model slug -> the images its value is a share of: a zero-shot top-1 of
    one condition on a set, n from the long summary (`n_images`, which the aggregated table lacks).
    A value averaged over several conditions of a set, and every other column, is left out (no
    interval)."""
    if long is None or "n_images" not in long:
        return {}
    top1 = records.rows(agg, "zeroshot", "top1")
    conditions = top1.groupby(["dataset", "model"])["condition_json"].nunique()
    found = records.rows(long, "zeroshot", "top1")
    n = (
        found.assign(n=pd.to_numeric(found["n_images"], errors="coerce"))
        .groupby(["dataset", "model"])["n"]
        .max()
    )
    out: dict[str, dict[str, float]] = {}
    for (dataset, model), count in conditions.items():
        images = n.get((dataset, model))
        if count == 1 and images is not None and not math.isnan(images):
            out.setdefault(zeroshot_title(str(dataset)), {})[str(model)] = float(images)
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


def value_cells(row: pd.Series, slug: str, images: dict[str, dict[str, float]]) -> pd.Series:
    """One model's values as text: a share of n images (`images`: title -> slug -> n) with its
    95% Wilson interval, any other value alone."""
    shown = cells(row.to_frame().T).iloc[0]
    for title, n in images.items():
        if title in row.index and slug in n:
            shown[title] = share_cell(row[title], n[slug])
    return shown


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
        made[FINETUNED.replace("{variant}", variant)] = (variant, method, settings, spec.lora)
    for variant, labelled in sorted(block.labelled.variants.items()):
        method, settings = LOSS_METHODS[labelled.loss], f"templates {block.labelled.templates}"
        if labelled.lora:
            method, settings = f"{method} + LoRA", f"{settings}, rank {labelled.lora}"
        made[LABELLED_FINETUNED.replace("{labelled}", variant)] = (
            variant,
            method,
            settings,
            labelled.lora,
        )
    # the path as the workflow writes it: the alpha as written in the params (1 or 1.0)
    for written, alpha in zip(params.values["finetune"]["wise"]["alphas"], block.wise.alphas):
        made[WISE.replace("{alpha}", str(written))] = (
            f"wise {alpha:g}",
            "WiSE-FT",
            f"alpha {alpha:g} towards {block.wise.of}",
            0,
        )
    found = []
    for path, (variant, method, settings, rank) in made.items():
        found += [
            Finetuned(variant, slug, method, settings, rank)
            for slug, model in params.models.items()
            if model.pretrained and os.path.normpath(model.pretrained) == os.path.normpath(path)
        ]
    return found


def unchanged(values: pd.DataFrame, changes: pd.DataFrame) -> dict[str, tuple[int, int]]:
    """Model slug -> (measures equal to the base's at the table's 0.1 precision, measures with a
    value for both)."""
    out = {}
    for key, row in changes.iterrows():
        defined = row.dropna()
        same = int((defined.abs() < 0.05).sum())
        out[key[2]] = (same, len(defined))
    return out


def lora_reason(block: FinetuneParams, f: Finetuned) -> str:
    """Why a LoRA variant can leave the base's measures as they were, from its params."""
    total = block.steps * block.lr
    return (
        f"{f.variant} trains only rank-{f.lora} LoRA adapters on the {block.lora.tower} tower's "
        f"{', '.join(block.lora.modules)} layers (the other tower is the base's); an adapter's "
        f"update (alpha/rank) B·A starts at zero (B = 0) and in {block.steps} AdamW steps at a "
        f"learning rate of at most {block.lr:g} each entry of B moves by about {total:.1g} at "
        "most, so the merged weights stay within a small fraction of the base's and the "
        "rankings these measures count barely move; more steps, a larger learning rate or rank "
        "make the adapters matter"
    )


def transposed(
    values: pd.DataFrame,
    changes: pd.DataFrame,
    latex: bool = False,
    images: dict[str, dict[str, float]] | None = None,
) -> pd.DataFrame:
    """A row per measure, a column per model (its variant name): the base's value, each
    variant's value with its change against the base in parentheses; a value that is one share
    of n images (`images`, as `top1_images` gives it) with its 95% Wilson interval in brackets."""
    columns = {}
    images = images or {}
    for key, row in values.iterrows():
        method, variant, slug, _ = key
        if method == "base":
            columns["base"] = value_cells(row, slug, images)
            continue
        change = (
            changes.xs(slug, level="model").iloc[0]
            if slug in set(changes.index.get_level_values("model"))
            else None
        )
        shown = value_cells(row, slug, images)
        if change is not None:
            signed = cells(change.to_frame().T, signed=True).iloc[0]
            shown = pd.Series(
                {k: v if v == MISSING else f"{v} ({signed[k]})" for k, v in shown.items()}
            )
        columns[variant] = shown
    frame = pd.DataFrame(columns)
    frame.index.name = "measure (%)"
    return frame


def legend(values: pd.DataFrame, changes: pd.DataFrame, base: str) -> pd.DataFrame:
    """A row per model: method, model entry, settings, measures equal to the base's."""
    same = unchanged(values, changes)
    rows = []
    for method, variant, slug, settings in values.index:
        k, n = same.get(slug, (0, 0))
        rows.append(
            {
                "variant": variant,
                "method": method,
                "model": slug,
                "settings": settings or MISSING,
                "same as base": "–" if slug == base else f"{k} of {n}",
            }
        )
    return pd.DataFrame(rows)


def n_text(images: dict[str, dict[str, float]]) -> str:
    """`objects: n = 30`: the images of each set (several counts listed where the models'
    differ)."""
    from vlstress.report.frames import count_cell

    parts = []
    for title, n in images.items():
        dataset = title.removeprefix("zero-shot ").removesuffix(" top-1")
        counts = "/".join(count_cell(c) for c in dict.fromkeys(n.values()))
        parts.append(f"{dataset}: n = {counts}")
    return "; ".join(parts)


@dataclass(frozen=True)
class FinetuneTables:
    """The texts `vlstress finetune-table` writes, and the notes it logs."""

    markdown: str
    csv: str
    latex: str
    notes: list[str]


def finetune_tables(
    params: Params, params_files: list[Path], summary: Path, counts: Path | None = None
) -> FinetuneTables:
    """Base against its fine-tuned variants from the aggregated summary: values, then changes
    against the base (Markdown), the values (CSV) and a LaTeX table, each with its provenance.
    `counts`, the long summary, gives the images of each zero-shot top-1 (their Wilson
    intervals; without it none)."""
    from vlstress import provenance
    from vlstress.io import dumps_json, sha256_file
    from vlstress.report.frames import latex_escape

    agg = pd.read_csv(summary, keep_default_na=False, na_values=[""], dtype={"condition_json": str})
    long = records.read_summary(counts) if counts is not None else None
    base = params.block(FinetuneParams).base.slug
    values, changes, notes = comparison(agg, base, finetuned_models(params))
    images = top1_images(agg, long)
    params_block = params.block(FinetuneParams)
    same = unchanged(values, changes)
    for f in finetuned_models(params):
        k, n = same.get(f.slug, (0, 0))
        if f.lora and n and 2 * k >= n:
            reason = lora_reason(params_block, f)
            notes.append(f"{f.variant} equals the base in {k} of {n} measures: {reason}")
    inputs = {str(summary): sha256_file(summary)}
    if counts is not None:
        inputs[str(counts)] = sha256_file(counts)
    block = provenance.build(
        "finetune-table",
        {"params": [str(p) for p in params_files], "base": base, "notes": notes},
        inputs=inputs,
    )
    caption = (
        f"Fine-tuning of {base}: R@1, false R@1 and top-1 (%) of the base and of each fine-tuned "
        "variant (a column each), with the variant's change against the base in percentage "
        f"points in parentheses; {MISSING} undefined. "
        + (
            "Zero-shot top-1 of a test set: [lo, hi] is the 95% Wilson interval over the n images "
            f"of the set ({n_text(images)}); the mean corruption top-1 (a mean over corruptions "
            "and severities), a top-1 averaged over several conditions of a set, the change "
            "(two shares of the same images) and R@1 (the stress table gives its intervals) have "
            "none. "
            if images
            else "No intervals (the images behind each top-1 are unknown here). "
        )
        + "Methods: SC/VC = CLIP loss + w_sc SC + w_vc VC "
        "on captioned images; FLYP = the CLIP loss on class prompts; standard = cross-entropy "
        "through a zero-shot-initialised head; + LoRA = adapters only; WiSE-FT = weight "
        "interpolation"
    )
    text = f"{caption}\n\n"
    text += (
        "Variants (same as base: measures whose value equals the base's at this precision):\n\n"
        f"{legend(values, changes, base).to_markdown(index=False, disable_numparse=True)}\n\n"
    )
    heading = "Change against the base in parentheses" if not changes.empty else "Values"
    by_measure = transposed(values, changes, images=images).reset_index()
    text += f"{heading}:\n\n{by_measure.to_markdown(index=False, disable_numparse=True)}\n"
    text += "".join(f"\n_Note: {n}._\n" for n in notes)
    latex = transposed(values, changes, latex=True, images=images).reset_index()
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
