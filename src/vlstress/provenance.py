"""Provenance block carried by every result file.

No timestamps or host names: the block must be identical for identical runs so
that artifacts stay byte-identical. It records what decides the numbers:
params, seed, model and weights source, package versions, CPU kernel caps, device.
"""

from __future__ import annotations

import platform
import sys
from importlib import metadata
from typing import Any

from vlstress import __version__, cpu_kernels

PACKAGES = (
    "torch",
    "torchvision",
    "open_clip_torch",
    "numpy",
    "pillow",
    "nltk",
    "scikit-image",
    "pandas",
)


def package_versions(extra: tuple[str, ...] = ()) -> dict[str, str]:
    versions = {"python": platform.python_version(), "vlstress": __version__}
    for name in (*PACKAGES, *extra):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def build(
    step: str,
    params: dict[str, Any],
    *,
    seed: int | None = None,
    model: dict[str, Any] | None = None,
    device: str | None = None,
    inputs: dict[str, Any] | None = None,
    packages: tuple[str, ...] = (),
) -> dict[str, Any]:
    """`packages`: versions to record beyond PACKAGES (a step's own libraries, e.g.
    torchattacks)."""
    block: dict[str, Any] = {
        "step": step,
        "params": params,
        "seed": seed,
        "packages": package_versions(packages),
        "platform": f"{platform.system()}-{platform.machine()}",
        "cpu_kernels": cpu_kernels.in_effect(),  # the instruction-set caps the float bits depend on
        "command": " ".join(["vlstress", *sys.argv[1:]]),
    }
    if model is not None:
        block["model"] = model
    if device is not None:
        block["device"] = device
    if inputs is not None:
        block["inputs"] = inputs
    return block
