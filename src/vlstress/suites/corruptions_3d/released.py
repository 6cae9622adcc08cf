"""The released ImageNet-3DCC files of a test set's images, read in place.

ImageNet-3DCC (tools/download_imagenet_3dcc.sh of the original repository) unpacks as
`<root>/<corruption>/<severity>/<wnid>/<file>`, ImageNet-C's layout: the corrupted copy of ImageNet
val's `<wnid>/<file>` under the same name. Nothing is corrupted here: the manifest lists those
files (root = `<root>/<corruption>`), so the set is embedded and scored as a generated one. A
layout that is not this one is refused by name: a missing corruption or severity folder, and the
missing files counted with the first few named.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vlstress.errors import VlstressError
from vlstress.io import atomic_dir
from vlstress.suites.corruptions.imagenet_c import RELEASED_KINDS
from vlstress.suites.corruptions_3d.names import CORRUPTIONS, SEVERITIES
from vlstress.testsets.manifest import ClassificationSet
from vlstress.testsets.manifest import write as write_manifest

SHOWN = 3  # missing files named in the error


def check_layout(root: Path, name: str, severities: Sequence[int]) -> None:
    """The corruption's folder and one folder per severity exist under the release's root."""
    if name not in CORRUPTIONS:
        raise VlstressError(f"unknown 3D corruption {name!r}; known: {', '.join(CORRUPTIONS)}")
    bad = [s for s in severities if s not in SEVERITIES]
    if not severities or bad or len(set(severities)) != len(severities):
        raise VlstressError(f"severities must be distinct values in 1..5, got {list(severities)}")
    if not root.is_dir():
        raise VlstressError(f"released ImageNet-3DCC folder not found: {root}")
    if not (root / name).is_dir():
        raise VlstressError(
            f"released ImageNet-3DCC {root}: no folder {name}/ (expected "
            f"<root>/<corruption>/<severity>/<wnid>/<file>)"
        )
    missing = [str(s) for s in severities if not (root / name / str(s)).is_dir()]
    if missing:
        raise VlstressError(
            f"released ImageNet-3DCC {root / name}: no severity folder(s) {', '.join(missing)} "
            f"(expected {name}/<severity>/<wnid>/<file>)"
        )


def read_released(
    clean: ClassificationSet,
    name: str,
    severities: Sequence[int],
    released: str | Path,
    out_dir: str | Path,
    provenance: dict[str, Any] | None = None,
) -> ClassificationSet:
    """Write out_dir/manifest.json listing `<released>/<name>/<severity>/<wnid>/<file>` of every
    image of `clean` (ImageNet val, kind imagenet) and severity; a missing file is counted and
    named and leaves no output."""
    root = Path(released)
    check_layout(root, name, severities)
    if clean.kind not in RELEASED_KINDS:
        raise VlstressError(
            f"released ImageNet-3DCC {root}: the test set {clean.dataset} is of kind "
            f"{clean.kind}, not ImageNet val (kind imagenet): the released files are ImageNet val's"
        )
    images = [
        {
            "path": f"{severity}/{entry['path']}",
            "label": entry["label"],
            "severity": severity,
            "source_path": str(Path(clean.root) / entry["path"]),
        }
        for severity in severities
        for entry in clean.images
    ]
    missing = [e["path"] for e in images if not (root / name / e["path"]).is_file()]
    if missing:
        raise VlstressError(
            f"released ImageNet-3DCC {root / name}: {len(missing)} of {len(images)} files of "
            f"{clean.dataset} are missing: {', '.join(missing[:SHOWN])}"
            + (", ..." if len(missing) > SHOWN else "")
        )
    data = clean.derived(
        f"{clean.dataset}-3dcc-{name}",
        "corruption_3d",
        str(root / name),
        images,
        {
            "corruption": name,
            "severities": list(severities),
            "released": str(root),
            "depth": "as released (ImageNet-3DCC)",
        },
        provenance=provenance,
    )
    with atomic_dir(Path(out_dir)) as tmp:
        write_manifest(tmp / "manifest.json", data)  # checks it too
    return data
