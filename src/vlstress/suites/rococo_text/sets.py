"""The caption sets of the RoCOCO text stress-tests as embedding sets of the `retrieval` group."""

from __future__ import annotations

from pathlib import Path

from vlstress.embedding.sets import EmbeddingSet, captions
from vlstress.params import Params
from vlstress.suites.rococo_text.paths import caption_sets


def retrieval(config: Params) -> list[tuple[str, EmbeddingSet]]:
    """The sets this suite adds to a model's retrieval embedding job (file inside its folder,
    set)."""
    return [
        (f"text_variants/{Path(path).stem}.npy", captions(Path(path)))
        for path in caption_sets(config)
    ]
