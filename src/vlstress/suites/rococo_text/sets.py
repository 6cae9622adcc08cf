"""The caption sets of the RoCOCO text stress-tests as embedding sets of the `retrieval` group."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vlstress.embedding.sets import EmbeddingSet, captions
from vlstress.suites.rococo_text.paths import caption_sets


def retrieval(config: dict[str, Any]) -> list[tuple[str, EmbeddingSet]]:
    """The sets this suite adds to a model's retrieval embedding job (file inside its folder,
    set)."""
    return [
        (f"text_variants/{Path(path).stem}.npy", captions(Path(path)))
        for path in caption_sets(config)
    ]
