"""timm's model names read from its source files, without importing timm (which imports torch:
~15 s cold), so the params check can refuse an unknown `arch: timm:<name>` before any step runs.

timm registers an architecture with `@register_model` over its entry-point function in
`timm/models/*.py`, and keeps old names with `register_model_deprecations(__name__, {...})`;
`names()` reads both, the set `timm.is_model` accepts (a test compares them).
"""

from __future__ import annotations

import difflib
import importlib.util
import re
from functools import cache
from pathlib import Path

_REGISTERED = re.compile(r"^@register_model[ \t]*\n(?:@[^\n]*\n)*def[ \t]+(\w+)[ \t]*\(", re.M)
_DEPRECATIONS = re.compile(
    r"^register_model_deprecations\(\s*__name__\s*,\s*\{(.*?)\}\s*\)", re.M | re.S
)
_KEY = re.compile(r"""['"]([\w.-]+)['"]\s*:""")


@cache
def names() -> tuple[frozenset[str], frozenset[str]] | None:
    """(current architecture names, deprecated ones timm still maps), or None when timm is not
    installed."""
    found = importlib.util.find_spec("timm")
    if found is None or found.origin is None:
        return None
    current: set[str] = set()
    deprecated: set[str] = set()
    for path in sorted((Path(found.origin).parent / "models").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "register_model" not in text:
            continue
        current.update(_REGISTERED.findall(text))
        for block in _DEPRECATIONS.findall(text):
            deprecated.update(_KEY.findall(block))
    return frozenset(current), frozenset(deprecated - current)


def problem(slug: str, name: str) -> str | None:
    """What is wrong with the timm architecture `name` of model `slug` (None: timm has it, or timm
    is not installed: the model card says so)."""
    known = names()
    if known is None:
        return None
    current, deprecated = known
    if name and "." not in name and name in current | deprecated:
        return None
    arch = name.split(".")[0]
    close = difflib.get_close_matches(arch, sorted(current), n=5, cutoff=0.6)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    tag = " (a pretrained tag goes in `pretrained`, not the arch)" if "." in name else ""
    return (
        f"model {slug!r}: unknown timm architecture {name!r}{hint}{tag}; see "
        "`python -c 'import timm; print(timm.list_models())'`"
    )
