"""The params block of the prompts suite (`prompts`): schema and checks."""

from __future__ import annotations

from typing import Any

import yaml

from vlstress import typed
from vlstress.suites.prompts.block import PromptsParams

SCHEMA = yaml.safe_load(
    r"""
prompts:
  type: object
  description: "prompt-count ablation and AutoCLIP template weighting over the zero-shot templates
                (docs/prompts.md)"
  required: [counts, seeds, seed, bins, beta]
  additionalProperties: false
  properties:
    counts:
      description: "template counts of the ablation, comma-separated (null = 1, 2, 4, ... and the
                    size of zeroshot.templates); none may exceed that size"
      oneOf:
        - {type: "null"}
        - {type: string, pattern: "^[0-9]+(,[0-9]+)*$"}
        - {type: integer, minimum: 1}
    seeds: {type: integer, minimum: 1, description: "random template subsets per count"}
    seed: {type: integer, minimum: 0, description: "seed of the first subset (then seed + 1, ...)"}
    bins: {type: integer, minimum: 1, description: "equal-width confidence bins of the ECE (15)"}
    beta: {type: number, exclusiveMinimum: 0, maximum: 1,
           description: "AutoCLIP: entropy of the template weights = beta * log(templates)
                         (0.85 as in the paper)"}
"""
)


# the zero-shot template sets that are open_clip's: the tuple of `open_clip.zero_shot_metadata`
# each one is (vlstress.suites.zeroshot.templates; a test holds the two equal)
OPEN_CLIP_SETS = {"openai": "OPENAI_IMAGENET_TEMPLATES", "simple": "SIMPLE_IMAGENET_TEMPLATES"}


def open_clip_set_size(name: str) -> int | None:
    """The size of an open_clip template set, read from open_clip's source without importing it
    (open_clip imports torch); None if that file cannot be read so."""
    import ast
    import importlib.util
    from pathlib import Path

    found = importlib.util.find_spec("open_clip")
    if name not in OPEN_CLIP_SETS or found is None or found.origin is None:
        return None
    path = Path(found.origin).parent / "zero_shot_metadata.py"
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return None
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == OPEN_CLIP_SETS[name] for t in node.targets)
            and isinstance(node.value, (ast.Tuple, ast.List))
        ):
            return len(node.value.elts)
    return None


def template_pool_size(name: str) -> int | None:
    """The number of templates of the zero-shot template set `name` (a registry name or a file),
    without a model library; None where it cannot be told (a bad file: the zeroshot suite's check
    names it)."""
    from pathlib import Path

    from vlstress.errors import VlstressError
    from vlstress.suites.zeroshot.templates import TEMPLATE_SETS, resolve

    if name in OPEN_CLIP_SETS:
        return open_clip_set_size(name)
    if name in TEMPLATE_SETS or Path(name.partition("#")[0]).suffix:
        try:
            return len(resolve(name)[0])
        except VlstressError:
            return None
    return None


def problems(params: dict[str, Any], on: frozenset[str]) -> list[str]:
    """The counts: positive, distinct, and none above the size of the zero-shot template set (read
    without a model library: a template file, `single`, and open_clip's sets from its source)."""
    from vlstress.suites.prompts.counts import count_problems

    if "prompts" not in on or "zeroshot" not in on or "prompts" not in params:
        return []
    block = typed.build(PromptsParams, params["prompts"], "prompts")
    name = params["zeroshot"]["templates"]
    size = template_pool_size(name)
    return [f"prompts.counts: {p}" for p in count_problems(block.counts, size, name)]
