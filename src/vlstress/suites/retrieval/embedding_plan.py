"""What `vlstress embed-retrieval` embeds: the manifest's images and captions, and the sets the
suites that are on add to the `retrieval` group (vlstress.embedding.sets)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vlstress.embedding.sets import EmbeddingSet


def plan(
    manifest: Path, params_files: Sequence[Path], providers: list[str]
) -> list[tuple[str, EmbeddingSet]]:
    """The (file name, set) pairs of one folder: `images.npy` and `texts.npy`, then the sets of
    the `providers` modules for the params (none given: no suite is on), every input file checked
    before any model work."""
    from vlstress.embedding import sets as embedding_sets
    from vlstress.params import Params

    found = [
        ("images.npy", embedding_sets.original_images(manifest)),
        ("texts.npy", embedding_sets.captions(manifest, "texts")),
    ]
    if params_files:  # none given: no suite is on
        found += embedding_sets.from_providers(providers, "retrieval", Params.load(params_files))
    embedding_sets.require_files([item for _, item in found])
    return found
