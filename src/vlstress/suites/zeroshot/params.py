"""The params block of zero-shot classification (`zeroshot`): schema and checks."""

from __future__ import annotations

from typing import Any

import yaml

from vlstress.params_check import classifier_problems, unknown

SCHEMA = yaml.safe_load(
    r"""
zeroshot:
  type: object
  description: "zero-shot classification under natural shifts (docs/zeroshot.md)"
  required: [testsets, templates, imagenet_maps, in_distribution, robustness, published]
  additionalProperties: false
  properties:
    testsets:
      type: object
      minProperties: 1
      propertyNames: {pattern: "^[a-z0-9][a-z0-9_]*$"}
      additionalProperties: {$ref: "#/$defs/testset"}
    templates: {type: string, minLength: 1,
                description: "openai | simple | single | a .txt/.json template file
                              (FILE.json#KEY)"}
    in_distribution: {type: string,
                      description: "the test set whose accuracy is the x axis of effective
                                    robustness"}
    imagenet_maps:
      type: [string, "null"]
      description: "set=file,...: each test set's classes as ImageNet-1k classes, a json file
                    {class: [wnid or index, ...]} (or demo): how a supervised ImageNet classifier
                    (arch timm:<name>) scores them; the ImageNet family (imagenet, -v2, -sketch,
                    -r, -a, -c, objectnet) needs none. null = none given"
    published:
      type: object
      description: "each model's clean top-1 beside the published number (docs/zeroshot.md,
                    The published check)"
      required: [tolerance, protocol_tolerance]
      additionalProperties: false
      properties:
        tolerance: {type: number, minimum: 0,
                    description: "points |run - published| may differ by under the published
                                  protocol"}
        protocol_tolerance: {type: number, minimum: 0,
                             description: "the same where the classifier differs from the
                                           published one: templates other than openai, one's own
                                           class names, a timm model on ObjectNet"}
    robustness:
      type: object
      required: [transform, fit, mce_baseline, baselines, bootstrap]
      additionalProperties: false
      properties:
        transform: {enum: [logit, probit, linear]}
        fit: {enum: [ols, huber]}
        baselines: {type: string, minLength: 1,
                    description: "the line of effective robustness: testbed (imagenet-testbed's 85
                                  ImageNet-trained models, for an imagenet in-distribution set and
                                  the shifts of a testbed column; the others get run's) | run
                                  (this run's models) | a CSV file in the testbed table's layout
                                  (percent)"}
        bootstrap: {type: integer, minimum: 0,
                    description: "resamples of the published baselines for the 95% band and ER
                                  interval (seeded by `seed`); 0 = none"}
        mce_baseline: {type: [string, "null"],
                       description: "model slug whose corruption errors normalise the others (mCE);
                                     null = no mCE"}
"""
)


def problems(params: dict[str, Any], on: frozenset[str]) -> list[str]:
    """Test-set kinds, the template set, the in-distribution set and the mCE baseline model."""
    from vlstress.testsets.entry_check import entry_problems

    if "zeroshot" not in on:
        return []
    found: list[str] = []
    zeroshot = params["zeroshot"]
    testsets = zeroshot["testsets"]
    for name, entry in testsets.items():
        found += entry_problems(entry, f"zeroshot.testsets.{name}")
    found += templates_problems(zeroshot["templates"], "zeroshot.templates")
    if zeroshot["in_distribution"] not in testsets:
        found.append(
            "zeroshot.in_distribution: "
            + unknown("test set", zeroshot["in_distribution"], testsets)
        )
    found += imagenet_map_problems(zeroshot["imagenet_maps"], testsets)
    found += unmapped_problems(params, testsets)
    published = zeroshot["published"]
    if published["protocol_tolerance"] < published["tolerance"]:
        found.append(
            f"zeroshot.published.protocol_tolerance ({published['protocol_tolerance']}) is below "
            f"zeroshot.published.tolerance ({published['tolerance']}): the wider protocol "
            "tolerance must be at least as large"
        )
    baseline = zeroshot["robustness"]["mce_baseline"]
    if baseline is not None:
        found += classifier_problems(params["models"], baseline, "zeroshot.robustness.mce_baseline")
    found += baselines_problems(zeroshot["robustness"]["baselines"])
    return found


def baselines_problems(value: str) -> list[str]:
    """zeroshot.robustness.baselines: testbed, run, or a readable CSV of the testbed's layout."""
    if value in ("testbed", "run"):  # no table to read (pandas stays unimported)
        return []
    from vlstress.errors import VlstressError
    from vlstress.suites.zeroshot.robustness_lines import read_reference

    try:
        read_reference(value)
    except VlstressError as exc:
        return [f"zeroshot.robustness.baselines: {exc} (or testbed | run)"]
    return []


def imagenet_map_problems(value: str | None, testsets: dict[str, Any]) -> list[str]:
    """Each pair of zeroshot.imagenet_maps names a test set and a readable map."""
    from vlstress.errors import VlstressError
    from vlstress.suites.zeroshot.block import parse_imagenet_maps
    from vlstress.testsets.imagenet_map import read_map

    try:
        pairs = parse_imagenet_maps(value)
    except VlstressError as exc:
        return [str(exc)]
    found = []
    for name, path in pairs.items():
        where = f"zeroshot.imagenet_maps.{name}"
        if name not in testsets:
            found.append(f"{where}: " + unknown("test set", name, testsets))
            continue
        try:
            read_map(path)
        except VlstressError as exc:
            found.append(f"{where}: {exc}")
    return found


def unmapped_problems(params: dict[str, Any], testsets: dict[str, Any]) -> list[str]:
    """With a timm classifier among the models, every test set needs its ImageNet-1k classes: a
    kind that carries them, or a map given (the classifier job would fail after loading)."""
    from vlstress.embedding.kinds import model_kind
    from vlstress.errors import VlstressError
    from vlstress.suites.zeroshot.block import parse_imagenet_maps
    from vlstress.testsets.imagenet_map import SELF_MAPPED_KINDS

    timm = sorted(s for s, e in params["models"].items() if model_kind(e["arch"]) == "timm")
    if not timm:
        return []
    try:
        given = parse_imagenet_maps(params["zeroshot"]["imagenet_maps"])
    except VlstressError:
        return []  # said by imagenet_map_problems
    return [
        f"zeroshot.testsets.{name}: a {entry['kind']} set has no ImageNet-1k classes for the timm "
        f'model(s) {", ".join(timm)}: give a map, zeroshot.imagenet_maps: "{name}=<file>" '
        "(docs/models.md)"
        for name, entry in sorted(testsets.items())
        if entry["kind"] not in SELF_MAPPED_KINDS and name not in given
    ]


def templates_problems(value: str, where: str) -> list[str]:
    """The params check of a template setting at `where` (zero-shot's, fine-tuning's): a registry
    name, or a file read now (small) so that a bad one stops the run before any model work."""
    from pathlib import Path

    from vlstress.errors import VlstressError
    from vlstress.suites.zeroshot.templates import TEMPLATE_SETS, resolve

    if value in TEMPLATE_SETS:
        return []
    if not Path(value.partition("#")[0]).suffix:
        return [
            f"{where}: " + unknown("template set", value, TEMPLATE_SETS) + " (or a .txt/.json file)"
        ]
    try:
        resolve(value)
    except VlstressError as exc:
        return [f"{where}: {exc}"]
    return []
