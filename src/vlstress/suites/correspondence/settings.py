"""A set's protocol settings as one typed value, and its file beside the pair list
(`protocol.json`): the pairs step writes it from the params, the evaluation reads it, so an edit
of one set's settings reruns that set's steps only (pure Python)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from vlstress.errors import VlstressError
from vlstress.suites.correspondence import catalogue
from vlstress.suites.correspondence.catalogue import Threshold

FILE = "protocol.json"


@dataclass(frozen=True)
class Protocol:
    """How a set's pairs are prepared, matched and scored (Probe3D's settings by default)."""

    name: str  # scannet | navi | spair
    kind: str
    image_size: tuple[int, int]  # height, width
    mean: tuple[float, float, float]
    std: tuple[float, float, float]
    thresholds: tuple[Threshold, ...]
    matches: int | None = None  # scannet, navi
    scale_factor: float | None = None  # scannet, navi
    binned: Threshold | None = None  # scannet, navi: recalled per rotation bin
    bins: tuple[float, ...] | None = None  # rotation bin edges (degrees)
    max_angle: float | None = None  # navi
    split: str | None = None  # spair

    @property
    def headline(self) -> Threshold:
        """The threshold of the records' `recall`: the binned one, else the first."""
        return self.binned or self.thresholds[0]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def build(
    kind: str,
    image_size: str,
    mean: str,
    std: str,
    thresholds: str,
    matches: int | None = None,
    scale_factor: float | None = None,
    binned: str | None = None,
    bins: str | None = None,
    max_angle: float | None = None,
    split: str | None = None,
) -> Protocol:
    """The protocol of a set from its params entry's strings; a bad value is refused by name."""
    if kind not in catalogue.KINDS:
        raise VlstressError(
            f"unknown correspondence set kind {kind!r}; known: {', '.join(catalogue.KINDS)}"
        )
    name = catalogue.KINDS[kind]
    try:
        sides = catalogue.parse_numbers(image_size, "image_size")
        if len(sides) not in (1, 2):
            raise ValueError(f"image_size: expected a side or height,width, got {image_size!r}")
        protocol = Protocol(
            name=name,
            kind=kind,
            image_size=(int(sides[0]), int(sides[-1])),
            mean=catalogue.parse_numbers(mean, "mean", 3),  # type: ignore[arg-type]
            std=catalogue.parse_numbers(std, "std", 3),  # type: ignore[arg-type]
            thresholds=catalogue.parse_thresholds(thresholds, name),
            matches=matches,
            scale_factor=scale_factor,
            binned=None if binned is None else catalogue.parse_thresholds(binned, name)[0],
            bins=None if bins is None else catalogue.parse_bins(bins),
            max_angle=max_angle,
            split=split,
        )
    except ValueError as error:
        raise VlstressError(f"correspondence set ({kind}): {error}") from None
    missing = [f for f in catalogue.NEEDED[name] if getattr(protocol, f) is None]
    if missing:
        raise VlstressError(
            f"correspondence set ({kind}): the {name} protocol needs {', '.join(missing)}"
        )
    return protocol


def read(folder: Path) -> tuple[str, Protocol]:
    """The set's name and the protocol written beside its pair list."""
    path = Path(folder) / FILE
    try:
        data = json.loads(path.read_text())
        name = str(data.pop("set"))
        return name, Protocol(
            **{
                **data,
                "image_size": tuple(data["image_size"]),
                "mean": tuple(data["mean"]),
                "std": tuple(data["std"]),
                "thresholds": tuple(Threshold(**t) for t in data["thresholds"]),
                "binned": None if data["binned"] is None else Threshold(**data["binned"]),
                "bins": None if data["bins"] is None else tuple(data["bins"]),
            }
        )
    except FileNotFoundError:
        raise VlstressError(
            f"{path} not found: build the set's pair list first (vlstress correspondence-pairs)"
        ) from None
    except (json.JSONDecodeError, KeyError, TypeError) as error:
        raise VlstressError(
            f"{path} is not a protocol file of a correspondence set: {error}"
        ) from None
