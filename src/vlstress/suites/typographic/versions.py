"""The provenance block of `vlstress typographic`: the common one of vlstress.provenance.build,
plus what decides the drawn pixels (the freetype version and the font)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def provenance_block(manifest: Path, size: int, seed: int) -> dict[str, Any]:
    """The block of one attacked set: its size, seed, the clean manifest's sha256, the freetype
    version and the font record."""
    from PIL import features

    from vlstress import provenance
    from vlstress.io import sha256_file
    from vlstress.suites.typographic import overlay as typographic
    from vlstress.testsets.manifest import manifest_path

    block = provenance.build(
        "typographic",
        {"size": size},
        seed=seed,
        inputs={str(manifest): sha256_file(manifest_path(manifest))},
    )
    # glyph rasterisation decides the pixels
    block["packages"]["freetype2"] = features.version("freetype2") or "unknown"
    block["font"] = typographic.font_record()
    return block
