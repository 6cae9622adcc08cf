"""The params block of the video suite (`video`): schema and checks."""

from __future__ import annotations

from typing import Any

import yaml

from vlstress.params_check import unknown

VIDEO_KINDS = ("imagenet-vid-robust", "ytbb-robust")  # vlstress.testsets.video_kinds

SCHEMA = yaml.safe_load(
    r"""
video:
  type: object
  description: "pm-k accuracy on anchor frames and their neighbours (docs/video.md)"
  required: [testsets, k]
  additionalProperties: false
  properties:
    testsets:
      type: array
      minItems: 1
      uniqueItems: true
      items: {type: string, description: "a key of zeroshot.testsets of a video kind"}
    k: {type: integer, minimum: 0,
        description: "the largest frame distance: pm-0 .. pm-k are recorded (the paper: 10)"}
"""
)


def problems(params: dict[str, Any], on: frozenset[str]) -> list[str]:
    """Each test set must be a zero-shot test set of a video kind."""
    if "video" not in on or "zeroshot" not in on or "video" not in params:
        return []
    found = []
    testsets = params["zeroshot"]["testsets"]
    for name in params["video"]["testsets"]:
        if name not in testsets:
            found.append("video.testsets: " + unknown("test set", name, testsets))
        elif testsets[name].get("kind") not in VIDEO_KINDS:
            found.append(
                f"video.testsets: test set {name!r} is of kind {testsets[name].get('kind')!r}, "
                f"not a video kind ({', '.join(VIDEO_KINDS)}): it has no anchors and neighbours"
            )
    return found
