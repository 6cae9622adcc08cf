"""The work of `vlstress correspondence-pairs`: a set's pair list and protocol file, all or nothing.

A release is read in place (its reader refuses a wrong layout by name) and sampled as Probe3D does;
a synthetic kind first renders its scenes into OUT/release in the layout of the release it
imitates, then reads them with that release's reader, so the demo runs the real readers. The
rotations of the synthetic ScanNet-layout pairs are spread evenly over 5-75 degrees, so every one
of Probe3D's rotation bins holds pairs.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from vlstress.errors import VlstressError
from vlstress.io import atomic_dir, write_json
from vlstress.suites.correspondence import kinds, pairs, synthetic
from vlstress.suites.correspondence.settings import FILE, Protocol

RELEASE = "release"  # a synthetic set's rendered release, inside its folder
SYNTHETIC_SIZE = (240, 320)  # rendered height, width (the protocol resizes the images)
SYNTHETIC_ANGLES = (5.0, 75.0)  # first and last rotation of the synthetic view pairs


def synthetic_angles(count: int) -> tuple[float, ...]:
    low, high = SYNTHETIC_ANGLES
    return tuple(float(a) for a in np.round(np.linspace(low, high, count), 3))


def _read(protocol: Protocol, root: Path, count: int | None, seed: int) -> pairs.PairList:
    if protocol.name == "scannet":
        return kinds.read_release("scannet-1500", root)
    if protocol.name == "navi":
        return kinds.read_release("navi", root, max_angle=protocol.max_angle, seed=seed)
    # count None: every pair of the split (Probe3D's default is 200 per class and sample)
    return kinds.read_release(
        "spair-71k", root, split=protocol.split or "test", seed=seed, per_bucket=count
    )


def build(
    name: str, protocol: Protocol, root: Path | None, count: int | None, seed: int, out: Path
) -> pairs.PairList:
    """Write OUT/pairs.json and OUT/protocol.json (and OUT/release for a synthetic kind)."""
    out = Path(out)
    synthetic_kind = protocol.kind.startswith("synthetic-")
    if not synthetic_kind and root is None:
        raise VlstressError(f"correspondence set {name}: a {protocol.kind} set needs --root")
    with atomic_dir(out) as tmp:
        if synthetic_kind:
            if count is None:
                raise VlstressError(f"correspondence set {name}: --pairs (pairs to render)")
            rendered = tmp / RELEASE
            if protocol.name == "scannet":
                synthetic.write_scannet(
                    rendered, synthetic_angles(count), size=SYNTHETIC_SIZE, seed=seed
                )
                found = _read(protocol, rendered, None, seed)
            else:
                synthetic.write_spair(
                    rendered, size=SYNTHETIC_SIZE, split=protocol.split or "test", seed=seed
                )
                found = _read(protocol, rendered, count, seed)
            # the pairs name the release where it will be, not where it was written
            found = replace(found, header=replace(found.header, root=(out / RELEASE).as_posix()))
        else:
            found = _read(protocol, Path(str(root)), count, seed)
        if not found.pairs:
            raise VlstressError(
                f"correspondence set {name}: the {protocol.kind} release has no pairs"
            )
        pairs.write(tmp / "pairs.json", found)
        write_json(tmp / FILE, {**protocol.to_json(), "set": name})
    return found
