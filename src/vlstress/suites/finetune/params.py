"""The params block of robust fine-tuning (`finetune`): schema and checks (training data,
generators, and the models that evaluate the base and each variant)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from vlstress.params_check import unknown

SCHEMA = yaml.safe_load(
    r"""
finetune:
  type: object
  description: "robust fine-tuning with the semantic and visual contrastive losses
                (docs/finetune.md)"
  required: [base, train, text_kind, words, method, lam, form, margin, steps, batch_size, lr,
             weight_decay, warmup, accumulate, freeze, checkpoint_every, seed, nproc, variants,
             labelled, lora, wise]
  additionalProperties: false
  properties:
    base:
      type: object
      required: [slug, arch, pretrained]
      additionalProperties: false
      description: "the model fine-tuned: a copy of its entry under models (checked)"
      properties:
        slug: {type: string, description: "its key under models"}
        arch: {type: string, minLength: 1}
        pretrained: {type: [string, "null"]}
    train: {$ref: "#/$defs/dataset"}
    text_kind: {type: string,
                description: "caption-set kind of the altered training captions (same-concept,
                              diff-concept, rand-voca, danger)"}
    words: {type: [string, "null"], description: "word list of the danger kind"}
    method: {type: string, description: "image perturbation making the mixed images (mix, patch)"}
    lam: {type: number, minimum: 0, maximum: 1,
          description: "share of the original image in a mixed image"}
    form: {enum: [hard-negative, hinge],
           description: "form of the SC and VC losses (vlstress.suites.finetune.losses)"}
    margin: {type: number, minimum: 0, description: "margin alpha of the hinge form"}
    steps: {type: integer, minimum: 1}
    batch_size: {type: integer, minimum: 1, description: "image-caption pairs per optimizer step"}
    lr: {type: number, exclusiveMinimum: 0}
    weight_decay: {type: number, minimum: 0}
    warmup: {type: integer, minimum: 0}
    accumulate: {type: integer, minimum: 1,
                 description: "micro-batches per optimizer step (divides batch_size)"}
    freeze: {enum: [null, image, text], description: "keep one tower fixed"}
    checkpoint_every: {type: integer, minimum: 0,
                       description: "steps between resume checkpoints (0 = none)"}
    seed: {type: integer, minimum: 0}
    nproc: {type: integer, minimum: 1,
            description: "data-parallel processes (torchrun); the step asks for as many GPUs"}
    variants:
      type: object
      minProperties: 1
      propertyNames: {pattern: "^[a-z0-9][a-z0-9_]*$"}
      additionalProperties:
        type: object
        required: [w_sc, w_vc, lora]
        additionalProperties: false
        properties:
          w_sc: {type: number, minimum: 0}
          w_vc: {type: number, minimum: 0}
          lora: {type: integer, minimum: 0,
                 description: "LoRA rank: train adapters (peft) on finetune.lora's layers instead
                               of the weights; 0 = full fine-tuning"}
    labelled:
      type: object
      required: [train, templates, variants]
      additionalProperties: false
      description: "fine-tuning on labelled images: FLYP (the CLIP loss on class prompts) or
                    standard (the image tower and a zero-shot-initialised head, cross-entropy),
                    each variant a model"
      properties:
        train: {$ref: "#/$defs/testset"}
        templates: {type: string, minLength: 1,
                    description: "prompt templates of the classes (openai, simple, single or a
                                  file): FLYP's prompts, the standard head's initialisation"}
        variants:
          type: object
          propertyNames: {pattern: "^[a-z0-9][a-z0-9_]*$"}
          additionalProperties:
            type: object
            required: [loss, lora]
            additionalProperties: false
            properties:
              loss: {enum: [flyp, standard],
                     description: "flyp: CLIP loss on class prompts; standard: cross-entropy
                                   through a head initialised from the zero-shot classifier"}
              lora: {type: integer, minimum: 0,
                     description: "LoRA rank (0 = full fine-tuning), as for the SC/VC variants"}
    lora:
      type: object
      required: [alpha, dropout, tower, modules]
      additionalProperties: false
      description: "the LoRA adapters of the variants with a LoRA rank"
      properties:
        alpha: {type: integer, minimum: 1, description: "the update is scaled alpha / rank"}
        dropout: {type: number, minimum: 0, exclusiveMaximum: 1,
                  description: "dropout of the adapters' input (below 1: at 1 nothing trains)"}
        tower: {enum: [image, text]}
        modules: {type: string, pattern: "^[A-Za-z0-9_.]+(,[A-Za-z0-9_.]+)*$",
                  description: "comma-separated Linear layers, by the last parts of their module
                                names (e.g. mlp.c_fc,mlp.c_proj)"}
    wise:
      type: object
      required: [of, alphas]
      additionalProperties: false
      description: "WiSE-FT: (1 - alpha) * base + alpha * a variant's weights, each alpha a model"
      properties:
        of: {type: string, description: "the variant interpolated towards"}
        alphas:
          type: array
          uniqueItems: true
          items: {type: number, minimum: 0, maximum: 1}
"""
)

DOWNLOAD_KEYS = (
    "images",
    "captions",
    "max_images",
    "image_ids",
    "coco_url",
    "karpathy_url",
    "rococo_url",
)


def problems(params: dict[str, Any], on: frozenset[str]) -> list[str]:
    """The fine-tuning block: training data, generators, and the models that evaluate the base and
    each variant."""
    import math
    import os

    from vlstress.caption_data.kinds import KINDS as DATASET_KINDS
    from vlstress.embedding.kinds import IMAGE_TEXT_KINDS, model_kind
    from vlstress.suites.finetune.paths import FINETUNED, LABELLED_FINETUNED, WISE
    from vlstress.suites.rococo_image.variants import PERTURBATIONS
    from vlstress.suites.rococo_text.variants import KINDS as SET_KINDS
    from vlstress.suites.zeroshot.params import templates_problems
    from vlstress.testsets.entry_check import entry_problems

    if "finetune" not in on or "finetune" not in params:
        return [
            f"models.{slug}: its weights {entry['pretrained']} are made by the finetune suite, "
            "which is off: switch suites.finetune on, or leave the model out"
            for slug, entry in params["models"].items()
            if isinstance(entry.get("pretrained"), str)
            and Path(entry["pretrained"]).parts[:2] == ("results", "finetune")
        ]
    ft, models = params["finetune"], params["models"]
    found = []
    train = ft["train"]
    if train["kind"] not in DATASET_KINDS:
        found.append(
            "finetune.train.kind: " + unknown("dataset kind", train["kind"], DATASET_KINDS)
        )
    missing = [key for key in DOWNLOAD_KEYS if key not in train]
    if missing:
        found.append(
            f"finetune.train lacks {', '.join(missing)} (null where unused): the download step "
            "reads every one"
        )
    if train["name"] == params["dataset"]["name"]:
        found.append(
            f"finetune.train.name {train['name']!r} is the test dataset's name: the training "
            "data needs a folder of its own"
        )
    if ft["text_kind"] not in SET_KINDS:
        found.append(
            "finetune.text_kind: " + unknown("caption-set kind", ft["text_kind"], SET_KINDS)
        )
    elif SET_KINDS[ft["text_kind"]].needs_words and not ft.get("words"):
        found.append(f"finetune.words: kind {ft['text_kind']} needs a word list")
    if ft["method"] not in PERTURBATIONS:
        found.append(
            "finetune.method: " + unknown("image perturbation", ft["method"], PERTURBATIONS)
        )
    elif not PERTURBATIONS[ft["method"]].uses_partner:
        found.append(
            f"finetune.method: {ft['method']} mixes in no partner image; the visual contrastive "
            "loss needs one (mix, patch)"
        )
    if ft["batch_size"] % ft["accumulate"]:
        found.append(
            f"finetune.batch_size {ft['batch_size']} is not a multiple of finetune.accumulate "
            f"{ft['accumulate']}"
        )
    base = ft["base"]
    entry = models.get(base["slug"])
    if (
        entry is None
        or entry.get("arch") != base["arch"]
        or entry.get("pretrained") != base["pretrained"]
    ):
        found.append(
            "finetune.base must be a model of the run, as it is under models: add "
            f"models.{base['slug']}: {{arch: {base['arch']}, pretrained: "
            f"{base['pretrained'] if base['pretrained'] is not None else 'null'}}} (the "
            "comparison needs the base evaluated beside its variants)"
        )
    if model_kind(base["arch"]) not in IMAGE_TEXT_KINDS:
        found.append(
            f"finetune.base: {base['arch']} is a supervised classifier; SC/VC fine-tuning trains "
            "an image-text model (an open_clip architecture)"
        )
    labelled = ft["labelled"]
    lora_blocks = [("variants", ft["variants"]), ("labelled.variants", labelled["variants"])]
    for block, variants in lora_blocks:
        for variant, spec in variants.items():
            if spec["lora"] and ft["freeze"]:
                found.append(
                    f"finetune.{block}.{variant}.lora: LoRA trains only its adapters; "
                    f"finetune.freeze ({ft['freeze']}) must be null"
                )
    found += entry_problems(labelled["train"], "finetune.labelled.train")
    found += templates_problems(labelled["templates"], "finetune.labelled.templates")
    wise = ft["wise"]
    for alpha in wise["alphas"]:
        if not math.isfinite(alpha) or str(alpha).startswith("-"):
            found.append(f"finetune.wise.alphas: {alpha} is not a number in [0, 1]")
    if wise["alphas"] and wise["of"] not in ft["variants"]:
        found.append(
            "finetune.wise.of: "
            + unknown("variant", wise["of"], ft["variants"])
            + " (WiSE-FT interpolates towards a variant's weights)"
        )
    by_path = {
        os.path.normpath(str(e["pretrained"])): slug
        for slug, e in models.items()
        if e.get("pretrained")
    }
    made = {
        **{
            os.path.normpath(FINETUNED.replace("{variant}", name)): f"finetune.variants.{name}"
            for name in ft["variants"]
        },
        **{
            os.path.normpath(
                LABELLED_FINETUNED.replace("{labelled}", name)
            ): f"finetune.labelled.variants.{name}"
            for name in labelled["variants"]
        },
        **{
            os.path.normpath(WISE.replace("{alpha}", str(alpha))): f"finetune.wise alpha {alpha}"
            for alpha in wise["alphas"]
        },
    }
    for path, what in made.items():
        slug = by_path.get(path)
        if slug is None:
            found.append(
                f"{what} is evaluated by no model: add models.<slug>: "
                f"{{arch: {base['arch']}, pretrained: {path}}}"
            )
        elif models[slug]["arch"] != base["arch"]:
            found.append(
                f"models.{slug}: the weights of {what} are a {base['arch']}, not a "
                f"{models[slug]['arch']}"
            )
    for path, slug in by_path.items():
        if Path(path).parts[:2] == ("results", "finetune") and path not in made:
            found.append(
                f"models.{slug}: {path} is the checkpoint of no variant in finetune.variants "
                "or finetune.labelled.variants and of no alpha in finetune.wise.alphas"
            )
    return found
