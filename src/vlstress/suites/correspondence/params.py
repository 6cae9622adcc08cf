"""The params block of the correspondence suite (`correspondence`): schema and checks."""

from __future__ import annotations

from typing import Any

import yaml

from vlstress.params_check import unknown

SCHEMA = yaml.safe_load(
    r"""
correspondence:
  type: object
  description: "3D awareness: dense correspondence of frozen image towers, Probe3D's protocol
                (docs/3d.md)"
  required: [sets]
  additionalProperties: false
  properties:
    sets:
      type: object
      minProperties: 1
      propertyNames: {pattern: "^[a-z0-9][a-z0-9_]*$"}
      additionalProperties:
        type: object
        description: "one correspondence set: a release folder (or synthetic scenes) and its
                      protocol's settings; fields the protocol does not use stay null"
        required: [kind, root, pairs, seed, image_size, mean, std, matches, scale_factor,
                   thresholds, binned, bins, max_angle, split]
        additionalProperties: false
        properties:
          kind: {type: string, description: "scannet-1500 | navi | spair-71k | synthetic-scannet |
                                              synthetic-spair (correspondence.catalogue)"}
          root: {type: [string, "null"],
                 description: "the release folder (null for a synthetic kind)"}
          pairs: {type: [integer, "null"], minimum: 1,
                  description: "synthetic: pairs rendered; spair-71k: pairs per class and viewpoint
                                bucket (Probe3D: 200); null: every pair of the release"}
          seed: {type: integer, minimum: 0,
                 description: "rendering or sampling seed (Probe3D: navi 8, spair 20)"}
          image_size: {type: string, pattern: "^[0-9]+(,[0-9]+)?$",
                       description: "side, or height,width, the images are resized to (Probe3D:
                                     scannet 480,640; navi 512; spair 800)"}
          mean: {type: string, description: "per-channel normalisation mean, r,g,b (Probe3D: scannet
                                             0.5; navi and spair ImageNet's)"}
          std: {type: string, description: "per-channel normalisation std, r,g,b"}
          matches: {type: [integer, "null"], minimum: 1,
                    description: "scannet, navi: ratio-test matches kept per pair (Probe3D: 1000)"}
          scale_factor: {type: [number, "null"], exclusiveMinimum: 0, maximum: 1,
                         description: "scannet, navi: depth (grid) scale before matching (0.25)"}
          thresholds: {type: string,
                       description: "error thresholds with units: scannet 5px,10px,20px; navi
                                     1cm,2cm,5cm,5px,25px,50px; spair 0.1box"}
          binned: {type: [string, "null"],
                   description: "scannet, navi: the threshold recalled per rotation bin
                                 (10px; 2cm)"}
          bins: {type: [string, "null"],
                 description: "scannet, navi: rotation bin edges in degrees (0,15,30,60,180;
                               0,30,60,90,120)"}
          max_angle: {type: [number, "null"], exclusiveMinimum: 0, maximum: 180,
                      description: "navi: largest rotation between the views of a pair (120)"}
          split: {type: [string, "null"], enum: [test, val, trn, null],
                  description: "spair: the split's pair annotations (test)"}
"""
)


def problems(params: dict[str, Any], on: frozenset[str]) -> list[str]:
    """Each set's kind, the fields its protocol needs, and its thresholds and bins."""
    from vlstress.suites.correspondence import catalogue

    if "correspondence" not in on or "correspondence" not in params:
        return []
    found = []
    for name, entry in params["correspondence"]["sets"].items():
        where = f"correspondence.sets.{name}"
        kind = entry["kind"]
        if kind not in catalogue.KINDS:
            found.append(
                f"{where}.kind: " + unknown("correspondence set kind", kind, catalogue.KINDS)
            )
            continue
        protocol = catalogue.KINDS[kind]
        missing = [field for field in catalogue.NEEDED[protocol] if entry.get(field) is None]
        if missing:
            found.append(f"{where}: the {protocol} protocol needs {', '.join(missing)}")
        if kind in catalogue.SYNTHETIC and entry["pairs"] is None:
            found.append(f"{where}.pairs: a synthetic set needs the number of pairs to render")
        if kind not in catalogue.SYNTHETIC and entry["root"] is None:
            found.append(f"{where}.root: a {kind} set reads the release folder named here")
        found += _setting_problems(where, entry, protocol)
    return found


def _setting_problems(where: str, entry: dict[str, Any], protocol: str) -> list[str]:
    from vlstress.suites.correspondence import catalogue

    found = []
    checks = [
        ("thresholds", lambda v: catalogue.parse_thresholds(v, protocol)),
        ("binned", lambda v: catalogue.parse_thresholds(v, protocol)),
        ("bins", catalogue.parse_bins),
        ("mean", lambda v: catalogue.parse_numbers(v, "mean", 3)),
        ("std", lambda v: catalogue.parse_numbers(v, "std", 3)),
    ]
    for field, parse in checks:
        if entry.get(field) is None:
            continue
        try:
            parse(entry[field])
        except ValueError as error:
            found.append(f"{where}.{field}: {error}")
    if entry.get("binned") is not None and entry.get("thresholds") is not None:
        try:
            binned = catalogue.parse_thresholds(entry["binned"], protocol)
            kept = catalogue.parse_thresholds(entry["thresholds"], protocol)
        except ValueError:
            return found
        if len(binned) != 1 or binned[0] not in kept:
            found.append(f"{where}.binned: one of the set's thresholds ({entry['thresholds']})")
    return found
