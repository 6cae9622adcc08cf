"""The correspondence set kinds and what each protocol's settings mean, as data (pure Python: the
params check, the planner and the report read it).

A set's `kind` names the release layout it reads (or the synthetic scenes the project renders) and
so its protocol, Probe3D's evaluation of that dataset (docs/3d.md):

- `scannet`: geometric correspondence between two RGB-D views of a room, 2D error in view 1 of the
  matched 3D points, recall within pixel thresholds, the middle threshold per rotation bin;
- `navi`: the same between two views of an object in the wild, 3D error in metres and 2D error in
  pixels, the 2 cm recall per rotation bin;
- `spair`: semantic correspondence (keypoint transfer between two images of a class), PCK at a
  share of the target box, per viewpoint-variation bucket, averaged over classes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KINDS: dict[str, str] = {  # kind -> protocol
    "scannet-1500": "scannet",
    "navi": "navi",
    "spair-71k": "spair",
    "synthetic-scannet": "scannet",  # rendered RGB-D scenes in the scannet-1500 layout
    "synthetic-spair": "spair",  # rendered keypoint pairs in the spair-71k layout
}
SYNTHETIC = ("synthetic-scannet", "synthetic-spair")

# what each protocol needs of a set entry (the others stay null); Probe3D's values in params.yaml
NEEDED: dict[str, tuple[str, ...]] = {
    "scannet": (
        "image_size",
        "mean",
        "std",
        "matches",
        "scale_factor",
        "thresholds",
        "binned",
        "bins",
    ),
    "navi": (
        "image_size",
        "mean",
        "std",
        "matches",
        "scale_factor",
        "thresholds",
        "binned",
        "bins",
        "max_angle",
    ),
    "spair": ("image_size", "mean", "std", "thresholds", "split"),
}
UNITS = {"scannet": ("px",), "navi": ("cm", "px"), "spair": ("box",)}
THRESHOLD = re.compile(r"^(\d+(?:\.\d+)?)(px|cm|box)$")


@dataclass(frozen=True)
class Threshold:
    """An error threshold with its unit: pixels, centimetres, or a share of the target box side."""

    value: float
    unit: str  # px | cm | box

    @property
    def metric(self) -> str:
        """The record's metric name of the recall (%) below it: `recall_10px`, `recall_2cm`,
        `pck_0.1box`."""
        number = f"{self.value:g}"
        return f"pck_{number}box" if self.unit == "box" else f"recall_{number}{self.unit}"

    @property
    def metres(self) -> float:
        return self.value / 100.0 if self.unit == "cm" else self.value


def parse_thresholds(value: str, protocol: str) -> tuple[Threshold, ...]:
    """`5px,10px,20px` -> thresholds; a unit the protocol does not measure is refused."""
    found = []
    for part in str(value).split(","):
        match = THRESHOLD.match(part.strip())
        if match is None:
            raise ValueError(
                f"threshold {part.strip()!r}: expected a number and a unit (px, cm or box), "
                "e.g. 10px"
            )
        threshold = Threshold(float(match.group(1)), match.group(2))
        if threshold.unit not in UNITS[protocol]:
            raise ValueError(
                f"threshold {part.strip()!r}: the {protocol} protocol measures errors in "
                f"{' and '.join(UNITS[protocol])}"
            )
        found.append(threshold)
    if not found:
        raise ValueError("no threshold given")
    return tuple(found)


def parse_numbers(value: str, what: str, count: int | None = None) -> tuple[float, ...]:
    """`0,15,30` -> (0.0, 15.0, 30.0); `count` numbers when given."""
    try:
        numbers = tuple(float(part) for part in str(value).split(","))
    except ValueError:
        raise ValueError(f"{what}: expected comma-separated numbers, got {value!r}") from None
    if count is not None and len(numbers) != count:
        raise ValueError(f"{what}: expected {count} numbers, got {value!r}")
    return numbers


def parse_bins(value: str) -> tuple[float, ...]:
    """Rotation bin edges in degrees, increasing: `0,15,30,60,180`."""
    edges = parse_numbers(value, "bins")
    if len(edges) < 2 or any(b <= a for a, b in zip(edges, edges[1:], strict=False)):
        raise ValueError(f"bins: expected at least two increasing edges in degrees, got {value!r}")
    return edges


def bin_label(low: float, high: float) -> str:
    """A rotation bin as the records' condition writes it: `0-15`."""
    return f"{low:g}-{high:g}"
