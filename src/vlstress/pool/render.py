"""The pool as a params fragment: a `models:` block, one entry per line, for merging with a
params file (`vlstress cost --params params.yaml --params <fragment>`)."""

from __future__ import annotations

from collections import Counter

import yaml

from vlstress.pool.entries import Candidate

HEADER = """\
# The model pool, written by `vlstress pool{flags}` (do not edit: run it again); {counts}.
# A params fragment: merge it after params.yaml, e.g.
#   vlstress cost --params params.yaml --params {out}
# `attributes` say what the papers group models by (docs/models.md, "The model pool").
"""


def text(candidates: list[Candidate], flags: str, out: str) -> str:
    counts = Counter(candidate.kind for candidate in candidates)
    said = ", ".join(f"{n} {kind}" for kind, n in counts.items()) or "no models"
    body = yaml.safe_dump(
        {"models": {c.slug: c.entry() for c in candidates}},
        sort_keys=False,
        width=1000,
        default_flow_style=None,
        allow_unicode=True,
    )
    return HEADER.format(flags=flags, counts=said, out=out) + body
