"""Prompt template sets (registry) and user files in CLIP_benchmark's format.

A template is a string with a `{c}` placeholder for the class name (CLIP_benchmark's
`en_zeroshot_classification_templates.json` convention). `resolve(name)` accepts a
registry name or a file:

- `openai`: OpenAI's 80 ImageNet templates (open_clip's `OPENAI_IMAGENET_TEMPLATES`);
- `simple`: the 7 templates OpenAI found best (open_clip's `SIMPLE_IMAGENET_TEMPLATES`);
- `single`: "a photo of a {c}.";
- a `.txt` file (one template per line), a `.json` list of templates, or a `.json` object
  keyed by dataset (CLIP_benchmark's file) with the key after `#`: `templates.json#cifar10`.

Class-name files use the same forms (`vlstress.testsets.lists.load_names`): one name per line, a
JSON list, or a JSON object keyed by dataset with `#key` (CLIP_benchmark's `en_classnames.json`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vlstress.errors import VlstressError
from vlstress.testsets.lists import read_list


def _open_clip_set(attribute: str) -> Callable[[], list[str]]:
    def load() -> list[str]:
        from open_clip import zero_shot_metadata

        # open_clip keeps them as callables (lambda c: f"a photo of a {c}."); `{c}` strings travel
        # in provenance
        return [template("{c}") for template in getattr(zero_shot_metadata, attribute)]

    return load


@dataclass(frozen=True)
class TemplateSet:
    description: str
    load: Callable[[], list[str]]


TEMPLATE_SETS: dict[str, TemplateSet] = {
    "openai": TemplateSet(
        "OpenAI's 80 ImageNet prompt templates", _open_clip_set("OPENAI_IMAGENET_TEMPLATES")
    ),
    "simple": TemplateSet(
        "the 7 ImageNet templates OpenAI selected", _open_clip_set("SIMPLE_IMAGENET_TEMPLATES")
    ),
    "single": TemplateSet('one template: "a photo of a {c}."', lambda: ["a photo of a {c}."]),
}


def resolve(name: str) -> tuple[list[str], str]:
    """(templates, description) of a registry name or a template file."""
    if name in TEMPLATE_SETS:
        entry = TEMPLATE_SETS[name]
        return entry.load(), entry.description
    if not Path(name.partition("#")[0]).suffix:
        raise VlstressError(
            f"unknown template set {name!r}: use one of {', '.join(TEMPLATE_SETS)} or a "
            ".txt/.json file"
        )
    templates = read_list(name, "template")
    bad = [t for t in templates if "{c}" not in t]
    if bad:
        raise VlstressError(
            f"template file {name}: {len(bad)} template(s) without the {{c}} placeholder: "
            + "; ".join(map(repr, bad))
        )
    return templates, f"templates from {name}"


def prompts(templates: list[str], classname: str) -> list[str]:
    # str.replace, not str.format: a template may hold other braces
    return [template.replace("{c}", classname) for template in templates]
