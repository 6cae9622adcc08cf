"""params.yaml: load, merge and validate — the same check on every path (Snakemake, DVC, CLI).

The schema (package data `params.schema.yaml`, linked from workflow/schemas/) checks
types and values; on top of it, unknown keys are named with the closest known one,
and each suite that is on must have the params blocks it reads.
"""

from __future__ import annotations

import copy
import difflib
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from vlstress.errors import VlstressError

SCHEMA_FILE = "data/params.schema.yaml"


def schema() -> dict[str, Any]:
    return yaml.safe_load(resources.files("vlstress").joinpath(SCHEMA_FILE).read_text(encoding="utf-8"))


def merge(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    """Recursive update (mappings merge, everything else is replaced): Snakemake's rule for --configfile."""
    out = copy.deepcopy(base)
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def load(paths: list[str | Path]) -> dict[str, Any]:
    """The params of one or more files, later files overriding earlier ones."""
    params: dict[str, Any] = {}
    for path in paths:
        path = Path(path)
        if not path.is_file():
            raise VlstressError(f"params file not found: {path}")
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise VlstressError(f"params file {path} is not valid YAML: {exc}") from None
        if not isinstance(data, dict):
            raise VlstressError(f"params file {path}: expected a mapping at the top level")
        params = merge(params, data)
    return params


def merge_into_file(target: str | Path, update_file: str | Path) -> None:
    """Merge a params file into `target` in place, as `merge` does, keeping target's comments and order."""
    from ruamel.yaml import YAML

    from vlstress.io import atomic_path

    yaml_rt = YAML()
    yaml_rt.width = 120
    yaml_rt.representer.add_representer(type(None), lambda rep, _: rep.represent_scalar("tag:yaml.org,2002:null", "null"))
    target, update_file = Path(target), Path(update_file)
    document = yaml_rt.load(target.read_text(encoding="utf-8"))
    update = yaml_rt.load(update_file.read_text(encoding="utf-8")) or {}

    def apply(node, changes) -> None:
        for key, value in changes.items():
            if isinstance(value, dict) and isinstance(node.get(key), dict):
                apply(node[key], value)
            else:
                node[key] = value

    apply(document, update)
    with atomic_path(target) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        yaml_rt.dump(document, fh)


def _where(error) -> str:
    return ".".join(str(p) for p in error.absolute_path) or "(top level)"


def _unknown_key_message(error) -> str | None:
    if error.validator != "additionalProperties" or not isinstance(error.instance, dict):
        return None
    known = list(error.schema.get("properties", {}))
    unknown = [k for k in error.instance if k not in known]
    if not unknown or not known:
        return None
    parts = []
    for key in unknown:
        close = difflib.get_close_matches(key, known, n=1)
        where = f"in {_where(error)}" if error.absolute_path else "at the top level"
        parts.append(f"unknown key {key!r} {where}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return "; ".join(parts) + f"; known keys: {', '.join(known)}"


def problems(params: Any) -> list[str]:
    """Every problem of a params mapping, as readable lines (empty when valid)."""
    import jsonschema

    from vlstress.pipeline.stages import SUITES

    schema_doc = schema()
    validator = jsonschema.Draft202012Validator(schema_doc)
    found = []
    for error in sorted(validator.iter_errors(params), key=lambda e: list(map(str, e.absolute_path))):
        found.append(_unknown_key_message(error) or f"{_where(error)}: {error.message}")
    if found or not isinstance(params, dict):
        return found
    for name, on in params.get("suites", {}).items():
        if name not in SUITES:
            close = difflib.get_close_matches(name, list(SUITES), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            found.append(f"suites: unknown suite {name!r}{hint}; known suites: {', '.join(SUITES)}")
        elif on:
            missing = [block for block in SUITES[name].needs if block not in params]
            if missing:
                found.append(f"suites.{name} is on but params lack {', '.join(missing)}")
            off = [other for other in SUITES[name].requires if not params["suites"].get(other)]
            if off:
                found.append(f"suites.{name} is on but needs suite(s) {', '.join(off)} on too")
    return found + registry_problems(params)


def _unknown(what: str, name: str, known) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    return f"unknown {what} {name!r}" + (f" (did you mean {close[0]!r}?)" if close else "") + f"; known: {', '.join(known)}"


def registry_problems(params: dict[str, Any]) -> list[str]:
    """Names that must be registry entries (dataset kinds, perturbations, caption-set kinds): no list of them here."""
    from vlstress.caption_data import KINDS as DATASET_KINDS
    from vlstress.suites.rococo_image.variants import PERTURBATIONS
    from vlstress.suites.rococo_text.variants import KINDS as SET_KINDS

    found = []
    kind = params["dataset"]["kind"]
    if kind not in DATASET_KINDS:
        found.append("dataset.kind: " + _unknown("dataset kind", kind, DATASET_KINDS))
    for method in (params.get("image_variants") or {}).get("methods", []):
        if method not in PERTURBATIONS:
            found.append("image_variants.methods: " + _unknown("image perturbation", method, PERTURBATIONS))
        elif PERTURBATIONS[method].faithful_only and params["image_variants"].get("mode") == "clean":
            found.append(f"image_variants.methods: {method} needs image_variants.mode faithful (it corrupts [0, 1] images)")
    for name, entry in ((params.get("text_variants") or {}).get("sets") or {}).items():
        if entry["kind"] not in SET_KINDS:
            found.append(f"text_variants.sets.{name}.kind: " + _unknown("caption-set kind", entry["kind"], SET_KINDS))
        elif SET_KINDS[entry["kind"]].needs_words and not entry.get("words"):
            found.append(f"text_variants.sets.{name}: kind {entry['kind']} needs a word list (words: \"a,b,c\")")
    return found + classification_problems(params) + finetune_problems(params)


DOWNLOAD_KEYS = ("images", "captions", "max_images", "image_ids", "coco_url", "karpathy_url", "rococo_url")


def finetune_problems(params: dict[str, Any]) -> list[str]:
    """The fine-tuning block: training data, generators, and the models that evaluate the base and each variant."""
    import os

    from vlstress.caption_data import KINDS as DATASET_KINDS
    from vlstress.suites.rococo_image.variants import PERTURBATIONS
    from vlstress.pipeline.stages import FINETUNED
    from vlstress.suites.rococo_text.variants import KINDS as SET_KINDS

    on = {name for name, value in (params.get("suites") or {}).items() if value}
    if "finetune" not in on or "finetune" not in params:
        return [
            f"models.{slug}: its weights {entry['pretrained']} are made by the finetune suite, which is off: switch "
            "suites.finetune on, or leave the model out"
            for slug, entry in params["models"].items()
            if isinstance(entry.get("pretrained"), str) and Path(entry["pretrained"]).parts[:2] == ("results", "finetune")
        ]
    ft, models = params["finetune"], params["models"]
    found = []
    train = ft["train"]
    if train["kind"] not in DATASET_KINDS:
        found.append("finetune.train.kind: " + _unknown("dataset kind", train["kind"], DATASET_KINDS))
    missing = [key for key in DOWNLOAD_KEYS if key not in train]
    if missing:
        found.append(f"finetune.train lacks {', '.join(missing)} (null where unused): the download step reads every one")
    if train["name"] == params["dataset"]["name"]:
        found.append(f"finetune.train.name {train['name']!r} is the test dataset's name: the training data needs a folder of its own")
    if ft["text_kind"] not in SET_KINDS:
        found.append("finetune.text_kind: " + _unknown("caption-set kind", ft["text_kind"], SET_KINDS))
    elif SET_KINDS[ft["text_kind"]].needs_words and not ft.get("words"):
        found.append(f"finetune.words: kind {ft['text_kind']} needs a word list")
    if ft["method"] not in PERTURBATIONS:
        found.append("finetune.method: " + _unknown("image perturbation", ft["method"], PERTURBATIONS))
    elif not PERTURBATIONS[ft["method"]].uses_partner:
        found.append(f"finetune.method: {ft['method']} mixes in no partner image; the visual contrastive loss needs one (mix, patch)")
    if ft["batch_size"] % ft["accumulate"]:
        found.append(f"finetune.batch_size {ft['batch_size']} is not a multiple of finetune.accumulate {ft['accumulate']}")
    base = ft["base"]
    entry = models.get(base["slug"])
    if entry is None or entry.get("arch") != base["arch"] or entry.get("pretrained") != base["pretrained"]:
        found.append(
            f"finetune.base must be a model of the run, as it is under models: add "
            f"models.{base['slug']}: {{arch: {base['arch']}, pretrained: {base['pretrained'] if base['pretrained'] is not None else 'null'}}} "
            "(the comparison needs the base evaluated beside its variants)"
        )
    by_path = {os.path.normpath(str(e["pretrained"])): slug for slug, e in models.items() if e.get("pretrained")}
    for variant in ft["variants"]:
        path = os.path.normpath(FINETUNED.replace("{variant}", variant))
        slug = by_path.get(path)
        if slug is None:
            found.append(f"finetune.variants.{variant} is evaluated by no model: add models.<slug>: {{arch: {base['arch']}, pretrained: {path}}}")
        elif models[slug]["arch"] != base["arch"]:
            found.append(f"models.{slug}: the weights of variant {variant} are a {base['arch']}, not a {models[slug]['arch']}")
    for path, slug in by_path.items():
        parts = Path(path).parts
        if parts[:2] == ("results", "finetune") and len(parts) == 4 and parts[2] not in ft["variants"]:
            found.append(f"models.{slug}: {path} is the checkpoint of no variant in finetune.variants")
    return found


def classification_problems(params: dict[str, Any]) -> list[str]:
    """Test-set kinds, corruption names, templates, and names that must be test sets or models."""
    from vlstress.testsets.kinds import KINDS as TESTSET_KINDS
    from vlstress.suites.corruptions.imagenet_c import CORRUPTIONS
    from vlstress.suites.zeroshot.templates import TEMPLATE_SETS

    found: list[str] = []
    on = {name for name, value in (params.get("suites") or {}).items() if value}
    if "zeroshot" not in on:  # corruptions and typographic require it (checked with the suites)
        return found
    zeroshot = params["zeroshot"]
    testsets = zeroshot["testsets"]
    for name, entry in testsets.items():
        if entry["kind"] not in TESTSET_KINDS:
            found.append(f"zeroshot.testsets.{name}.kind: " + _unknown("test-set kind", entry["kind"], TESTSET_KINDS))
    templates = zeroshot["templates"]
    if templates not in TEMPLATE_SETS and not Path(templates.partition("#")[0]).suffix:
        found.append("zeroshot.templates: " + _unknown("template set", templates, TEMPLATE_SETS) + " (or a .txt/.json file)")
    named = [("zeroshot.in_distribution", zeroshot["in_distribution"])]
    named += [(f"{block}.testset", params[block]["testset"]) for block in ("corruptions", "typographic") if block in on and block in params]
    for where, name in named:
        if name not in testsets:
            found.append(f"{where}: " + _unknown("test set", name, testsets))
    if "corruptions" in on and "corruptions" in params:
        for name in params["corruptions"]["names"]:
            if name not in CORRUPTIONS:
                found.append("corruptions.names: " + _unknown("corruption", name, CORRUPTIONS))
    baseline = zeroshot["robustness"]["mce_baseline"]
    if baseline is not None and baseline not in params["models"]:
        found.append("zeroshot.robustness.mce_baseline: " + _unknown("model", baseline, params["models"]))
    return found + holistic_problems(params, on)


def holistic_problems(params: dict[str, Any], on: set[str]) -> list[str]:
    """The adversarial, calibration and OOD blocks: attack kinds and options, test-set names, OOD sets and scores."""
    from vlstress.testsets.kinds import KINDS as TESTSET_KINDS
    from vlstress.errors import VlstressError
    from vlstress.suites.adversarial import attacks as adversarial
    from vlstress.suites.ood.scores import SCORES

    found: list[str] = []
    testsets = params["zeroshot"]["testsets"]
    for block, key in (("adversarial", "testset"), ("calibration", "in_distribution"), ("ood", "in_distribution")):
        if block in on and block in params and params[block][key] not in testsets:
            found.append(f"{block}.{key}: " + _unknown("test set", params[block][key], testsets))
    if "adversarial" in on and "adversarial" in params:
        names = [entry["name"] for entry in params["adversarial"]["attacks"]]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            found.append(f"adversarial.attacks: attack name(s) used twice: {', '.join(repeated)}")
        for entry in params["adversarial"]["attacks"]:
            try:
                adversarial.check_spec(attack_spec(entry))
            except VlstressError as exc:
                found.append(f"adversarial.attacks: {exc}")
    if "ood" in on and "ood" in params:
        for name, entry in params["ood"]["sets"].items():
            if entry["kind"] not in TESTSET_KINDS:
                found.append(f"ood.sets.{name}.kind: " + _unknown("test-set kind", entry["kind"], TESTSET_KINDS))
            if name in testsets:
                found.append(f"ood.sets.{name}: also a zero-shot test set name; give the OOD set its own name")
        for score in params["ood"]["scores"].split(","):
            if score not in SCORES:
                found.append("ood.scores: " + _unknown("OOD score", score, SCORES))
    return found


def attack_spec(entry: dict[str, Any]):
    """An `adversarial.attacks` entry of params as the AttackSpec `vlstress attack` builds from its flags."""
    from vlstress.suites.adversarial.attacks import AttackSpec, parse_extra

    eps = tuple(float(part) for part in str(entry["eps"]).split(","))
    return AttackSpec(name=entry["name"], kind=entry["kind"], norm=entry["norm"], eps=eps, steps=entry["steps"],
                      alpha=entry["alpha"], restarts=entry["restarts"], extra=parse_extra(entry["extra"]))  # fmt: skip


def validate(params: Any, source: str = "params.yaml") -> dict[str, Any]:
    """Raise one VlstressError listing every problem; return the params unchanged when valid."""
    found = problems(params)
    if found:
        lines = "\n".join(f"  - {line}" for line in found)
        raise VlstressError(f"{source} failed validation:\n{lines}")
    return params
