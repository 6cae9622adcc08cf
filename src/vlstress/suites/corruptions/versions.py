"""The provenance block of `vlstress corrupt`: the common one of vlstress.provenance.build, plus
the versions of the libraries that decide the corrupted pixels."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def library_versions() -> dict[str, str]:
    """Versions that decide the corrupted pixels besides the common ones of provenance.build."""
    from importlib import metadata

    versions = {}
    for name in (
        "imagecorruptions-imaug",
        "opencv-python",
        "opencv-python-headless",
        "numba",
        "scipy",
    ):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return versions


def provenance_block(manifest: Path, params: dict[str, Any], seed: int) -> dict[str, Any]:
    """The block of one corrupted set: its params, seed, the clean manifest's sha256 and the
    library versions."""
    from vlstress import provenance
    from vlstress.io import sha256_file
    from vlstress.testsets.manifest import manifest_path

    block = provenance.build(
        "corrupt",
        params,
        seed=seed,
        inputs={str(manifest): sha256_file(manifest_path(manifest))},
    )
    block["packages"].update(library_versions())
    return block
