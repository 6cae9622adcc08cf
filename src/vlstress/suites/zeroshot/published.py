"""Each model's clean top-1 beside the published number (`vlstress published-check`).

A run that reproduces the published zero-shot (or supervised) accuracy of a model on ImageNet,
ImageNet-V2, -R, -Sketch, -A and ObjectNet has its preprocessing, class names, prompts and
scoring right; one that is several points off has not. The published numbers are the tables
shipped in `vlstress/data/published` (SOURCES.md there), read by the readers of
`vlstress effective-robustness` (vlstress.suites.zeroshot.baselines):

- `openclip_zeroshot.csv`: open_clip's zero-shot results (CLIP_benchmark), one row per
  `<arch>/<pretrained tag>`: an open_clip model of the registry with a hub tag is that row;
- `testbed_standard.csv`: imagenet-testbed's ImageNet-trained models; a timm model
  (`arch: timm:<name>`, hub tag) is the row that `testbed_timm_names.csv` maps timm's full
  `<name>.<tag>` to (columns testbed, timm, note; an empty timm cell: no timm equivalent).

A test set's column is decided by its kind (`COLUMNS`), and the number is compared only where
the protocol is the published one (`protocol`): the whole set, the published class count
(ImageNet-A and -R: their 200 classes; ObjectNet: its 113 ImageNet classes, with the 2-pixel
border crop), no class selection, no corruption, and for open_clip models OpenAI's 80 templates
and the kind's own (CLIP's) class names. Otherwise the record says why: a subset widens the
tolerance by two standard errors of its sample; a classifier other than the published one (other
prompts or class names; a timm model on ObjectNet, which imagenet-testbed scored on its 1.0-beta
images) uses the wider protocol tolerance; anything else is "not comparable". Every (model, test
set) gets a record (task `published-check`), a model without a published number included, with
the reason.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vlstress.errors import VlstressError

TASK = "published-check"
# the folder of the shipped tables (its files are this step's data: vlstress.code_deps)
PUBLISHED_DATA = "data/published"
NAMES_FILE = "testbed_timm_names.csv"
NAMES_COLUMNS = ("testbed", "timm", "note")
OPEN_CLIP_TABLE = "open_clip"  # how a record names the table of its published number
TESTBED_TABLE = "imagenet-testbed"
ID_COLUMN = "imagenet1k"
# test-set kind -> the column of the published tables
COLUMNS = {
    "imagenet": "imagenet1k",
    "imagenet-v2": "imagenetv2",
    "imagenet-r": "imagenet-r",
    "imagenet-sketch": "imagenet_sketch",
    "imagenet-a": "imagenet-a",
    "objectnet": "objectnet",
}
# kind -> (images, classes) of the whole set the published numbers were measured on: the published
# sizes `vlstress cost` prices sets by (vlstress.cost.sizes.PUBLISHED, which reaches the test-set
# builders: a test holds the two equal)
FULL_SETS = {
    "imagenet": (50_000, 1000),
    "imagenet-v2": (10_000, 1000),
    "imagenet-r": (30_000, 200),
    "imagenet-sketch": (50_889, 1000),
    "imagenet-a": (7_500, 200),
    "objectnet": (18_574, 113),
}
# imagenet-testbed scored ObjectNet 1.0-beta, 18,514 images of the 113 classes, by the top logit
# among each class's ImageNet classes (its eval_settings/objectnet.py)
TESTBED_OBJECTNET_IMAGES = 18_514
OBJECTNET_BORDER_PX = 2
# ImageNetV2's other variants (their folder names): the tables hold MatchedFrequency
OTHER_V2_VARIANTS = ("threshold", "top-images", "topimages")
PUBLISHED_TEMPLATES = "openai"

# what a record's `status` says
CLEAN = "clean"  # the published protocol: compared within the tolerance
DIFFERS = "differs"  # compared within a wider tolerance, for the reasons stated
NOT_COMPARABLE = "not comparable"  # the numbers side by side, no verdict
NO_NUMBER = "no published number"  # the model or the set has no published row or column
# a reason's code (the record's condition `why`, joined by "+") -> its words in the table
REASONS = {
    "random-init": "random-init: no published number",
    "checkpoint": "local checkpoint: no published number",
    "no-row": "not in a published table",
    "no-column": "no published column for this kind of set",
    "no-value": "its published row lacks this set",
    "subset": "part of the set",
    "templates": "templates other than openai (80)",
    "classnames": "own class names, published CLIP's",
    "beta-set": "testbed scored ObjectNet 1.0-beta (18,514 images)",
    "selected": "classes selected (keep/drop)",
    "classes": "another class count than the published set's",
    "derived": "a corrupted or derived copy",
    "no-crop": "ObjectNet without the 2-px border crop",
    "v2-variant": "another ImageNetV2 variant than MatchedFrequency",
    "too-many": "more images than the published set",
}


@dataclass(frozen=True)
class Tables:
    """The published accuracies (fractions): (table, row) -> column -> value, and the files read
    (path -> sha256)."""

    values: dict[tuple[str, str], dict[str, float]]
    inputs: dict[str, str]

    def value(self, table: str, row: str, column: str) -> float | None:
        return self.values.get((table, row), {}).get(column)

    def has_row(self, table: str, row: str) -> bool:
        return (table, row) in self.values


def read_tables() -> Tables:
    """Both shipped tables through `baselines.read_tables`, one column at a time (a row that lacks
    one column keeps its others), in fractions."""
    from vlstress.suites.zeroshot.baselines import PUBLISHED, TESTBED, read_tables

    names = {PUBLISHED: OPEN_CLIP_TABLE, TESTBED: TESTBED_TABLE}
    values: dict[tuple[str, str], dict[str, float]] = {}
    inputs: dict[str, str] = {}
    for column in COLUMNS.values():
        if column == ID_COLUMN:
            continue
        args = argparse.Namespace(
            csv=list(names), model_column="model", id_column=ID_COLUMN, scale=1
        )
        frame, found, origin, _ = read_tables(args, [column])
        # named inside the package, not where it is installed: the record's bytes stay the same
        inputs.update({shipped_name(Path(path)): digest for path, digest in found.items()})
        for row in frame.itertuples(index=False):
            entry = values.setdefault((names[origin[row.model]], str(row.model)), {})
            entry[ID_COLUMN] = float(row.id_accuracy)
            entry[column] = float(row.shifted_accuracy)
    return Tables(values, inputs)


def shipped_name(path: Path) -> str:
    """A shipped table as the records name it: `vlstress/data/published/<file>`."""
    return f"vlstress/{PUBLISHED_DATA}/{path.name}"


def names_path() -> Path:
    """The shipped map of imagenet-testbed names to timm's."""
    from importlib import resources

    return Path(str(resources.files("vlstress").joinpath(PUBLISHED_DATA, NAMES_FILE)))


@dataclass(frozen=True)
class TimmNames:
    """timm's full name (`<name>.<tag>`) -> (imagenet-testbed's row, note); `source`: the file."""

    rows: dict[str, tuple[str, str]]
    source: Path
    found: bool  # False: no map file (every timm model then has no published row)


def read_timm_names(path: Path | None = None) -> TimmNames:
    """The name map (columns testbed, timm, note; an empty timm cell: no timm equivalent, left
    out). A timm name mapped to two testbed rows is an error naming both. Without `path`, the
    shipped file; a shipped file that is absent gives an empty map that says so."""
    import csv

    source = names_path() if path is None else Path(path)
    if not source.is_file():
        if path is None:
            return TimmNames({}, source, found=False)
        raise VlstressError(f"timm name map not found: {source}")
    with source.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in NAMES_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise VlstressError(
                f"timm name map {source}: lacks column(s) {', '.join(missing)}; has "
                f"{', '.join(reader.fieldnames or [])}"
            )
        rows: dict[str, tuple[str, str]] = {}
        for number, line in enumerate(reader, 2):
            testbed, timm = (line["testbed"] or "").strip(), (line["timm"] or "").strip()
            if not timm:
                continue
            if not testbed:
                raise VlstressError(f"timm name map {source}, line {number}: no testbed name")
            if timm in rows and rows[timm][0] != testbed:
                raise VlstressError(
                    f"timm name map {source}, line {number}: {timm} is mapped to both "
                    f"{rows[timm][0]} and {testbed}"
                )
            rows[timm] = (testbed, (line["note"] or "").strip())
    return TimmNames(rows, source, found=True)


@dataclass(frozen=True)
class Match:
    """A model's published row, or why it has none."""

    table: str | None
    row: str | None
    why: tuple[str, str] | None = None  # (code, text): why there is no published number
    note: str = ""  # the name map's note on the equivalence


def match_model(model: Mapping[str, Any], tables: Tables, names: TimmNames) -> Match:
    """The published row of a model, from its provenance block (`models.describe`: kind, arch,
    pretrained, weights)."""
    kind, arch = model.get("kind"), str(model.get("arch"))
    weights, pretrained = model.get("weights"), model.get("pretrained")
    if weights == "random-init":
        return Match(None, None, ("random-init", "random-init: no published number"))
    if weights != "hub":
        return Match(
            None, None, ("checkpoint", f"local checkpoint ({pretrained}): no published number")
        )
    if kind == "open_clip":
        row = f"{arch}/{pretrained}"
        if tables.has_row(OPEN_CLIP_TABLE, row):
            return Match(OPEN_CLIP_TABLE, row)
        return Match(None, None, ("no-row", f"not in a published table (open_clip {row})"))
    if kind == "timm":
        from vlstress.embedding.kinds import TIMM_PREFIX

        full = f"{arch.removeprefix(TIMM_PREFIX)}.{pretrained}"
        if not names.found:
            return Match(
                None,
                None,
                ("no-row", f"not in a published table (no timm name map {names.source.name})"),
            )
        if full not in names.rows:
            return Match(None, None, ("no-row", f"not in a published table (timm {full})"))
        row, note = names.rows[full]
        if not tables.has_row(TESTBED_TABLE, row):
            return Match(
                None,
                None,
                ("no-row", f"not in a published table (timm {full} = testbed {row}, no row)"),
            )
        return Match(TESTBED_TABLE, row, note=note)
    return Match(None, None, ("no-row", f"not in a published table (a {kind} model)"))


@dataclass(frozen=True)
class SetFacts:
    """What the protocol decision reads of a test set: its manifest and the evaluation's record."""

    kind: str
    n_images: int
    n_classes: int
    source: dict[str, Any] = field(default_factory=dict)  # the manifest's `source`
    options: dict[str, Any] = field(default_factory=dict)  # the manifest's provenance params
    templates: str | None = None  # the classifier's template set (the record's provenance)
    task: str = "zeroshot"  # the evaluated record's task (a corruption is not a clean set)


def set_facts(manifest, record) -> SetFacts:
    """The facts of a `ClassificationSet` and the zero-shot `Record` evaluated on it."""
    return SetFacts(
        kind=manifest.kind,
        n_images=int(record.dataset.get("n_images", len(manifest.images))),
        n_classes=len(manifest.classes),
        source=dict(manifest.source),
        options=dict((manifest.provenance or {}).get("params") or {}),
        templates=(record.provenance.get("params") or {}).get("templates"),
        task=record.task,
    )


@dataclass(frozen=True)
class Protocol:
    """How a set's number may be compared: its column, the status, the reasons, and the sample
    (images of the whole set) a subset's tolerance widens by."""

    column: str | None
    status: str
    reasons: tuple[tuple[str, str], ...] = ()  # (code, text) each
    full_images: int | None = None  # set when the run saw fewer images than the whole set
    # the classifier differs from the published one (other templates or class names; another
    # class-map rule): the protocol tolerance
    classifier_differs: bool = False


def protocol(facts: SetFacts, model_kind: str) -> Protocol:
    """The published column of a set and whether its protocol is the published one."""
    column = COLUMNS.get(facts.kind)
    if column is None:
        return Protocol(
            None, NO_NUMBER, (("no-column", f"no published column for a {facts.kind} set"),)
        )
    full_images, full_classes = FULL_SETS[facts.kind]
    apart: list[tuple[str, str]] = []  # not comparable
    wider: list[tuple[str, str]] = []  # compared within a wider tolerance
    if (
        facts.task != "zeroshot"
        or facts.options.get("corruption")
        or facts.source.get("clean_dataset")
    ):
        apart.append(("derived", "a corrupted or derived copy, not the clean set"))
    selected = facts.source.get("selected") or {}
    if selected or facts.options.get("keep") or facts.options.get("drop"):
        apart.append(
            (
                "selected",
                f"classes selected (keep/drop: {selected.get('classes', facts.n_classes)} of "
                f"{selected.get('of', full_classes)} classes)",
            )
        )
    elif facts.n_classes != full_classes:
        apart.append(
            ("classes", f"scored on {facts.n_classes} classes, published on {full_classes}")
        )
    if facts.kind == "objectnet":
        crop = facts.source.get("border_crop_px")
        if crop != OBJECTNET_BORDER_PX:
            apart.append(
                ("no-crop", f"ObjectNet border crop {crop} px, published {OBJECTNET_BORDER_PX} px")
            )
    if facts.kind == "imagenet-v2":
        root = str(facts.source.get("root") or facts.options.get("root") or "").lower()
        variant = next((v for v in OTHER_V2_VARIANTS if v in root), None)
        if variant:
            apart.append(
                ("v2-variant", f"ImageNetV2 variant {variant} (folder), published MatchedFrequency")
            )
    subset, differs = None, False
    if facts.n_images > full_images:
        apart.append(
            ("too-many", f"{facts.n_images:,} images, the published set has {full_images:,}")
        )
    elif facts.n_images < full_images:
        limit = facts.options.get("max_per_class")
        how = f", max_per_class {limit}" if limit is not None else ""
        wider.append(("subset", f"{facts.n_images:,} of {full_images:,} images{how}"))
        subset = full_images
    if model_kind == "open_clip":
        if facts.templates != PUBLISHED_TEMPLATES:
            wider.append(
                ("templates", f"templates {facts.templates}, published {PUBLISHED_TEMPLATES} (80)")
            )
            differs = True
        if facts.options.get("classnames"):
            wider.append(
                ("classnames", f"class names from {facts.options['classnames']}, published CLIP's")
            )
            differs = True
    if model_kind == "timm" and facts.kind == "objectnet":
        wider.append(
            (
                "beta-set",
                f"imagenet-testbed scored ObjectNet 1.0-beta ({TESTBED_OBJECTNET_IMAGES:,} images, "
                f"the released set {full_images:,})",
            )
        )
        differs = True
    if apart:
        return Protocol(column, NOT_COMPARABLE, tuple(apart + wider), subset, differs)
    if wider:
        return Protocol(column, DIFFERS, tuple(wider), subset, differs)
    return Protocol(column, CLEAN, (), None)


def sampling_pp(published: float, n: int, full: int) -> float:
    """Two standard errors (percentage points) of the accuracy of a sample of `n` of `full`
    images, at the published accuracy (finite-population correction: 0 for the whole set)."""
    if n <= 0 or full <= 0:
        return 0.0
    correction = max(0.0, 1.0 - n / full)
    return 200.0 * math.sqrt(published * (1.0 - published) / n * correction)


@dataclass(frozen=True)
class Check:
    """One (model, set) beside its published number."""

    reference: str | None  # "open_clip ViT-B-32/openai"
    column: str | None
    status: str
    why: tuple[str, ...]  # the codes of the reasons (`REASONS`): short, in the record's condition
    reasons: tuple[str, ...]  # the reasons in words, with their numbers (the record's provenance)
    run_top1: float | None  # percent
    published_top1: float | None = None  # percent
    diff_pp: float | None = None
    tolerance_pp: float | None = None
    flagged: int | None = None  # 1: |diff| > tolerance; None: no verdict

    def condition(self) -> dict[str, Any]:
        """Short values only (the summary names a DVC metrics file after the condition); a key
        without a value is left out."""
        found = {
            "reference": self.reference,
            "column": self.column,
            "status": self.status,
            "why": "+".join(self.why) or None,
        }
        return {key: value for key, value in found.items() if value is not None}

    def metrics(self) -> dict[str, Any]:
        return {
            "run_top1": self.run_top1,
            "published_top1": self.published_top1,
            "diff_pp": self.diff_pp,
            "tolerance_pp": self.tolerance_pp,
            "flagged": self.flagged,
        }


def check(
    run_top1: float | None,
    matched: Match,
    rule: Protocol,
    tables: Tables,
    n_images: int,
    tolerance: float,
    protocol_tolerance: float,
) -> Check:
    """The comparison of one (model, set): `run_top1` in percent, tolerances in points."""
    found = [*([matched.why] if matched.why else []), *rule.reasons]
    texts = [text for _, text in found] + ([matched.note] if matched.note else [])
    reference = f"{matched.table} {matched.row}" if matched.table else None
    published = (
        tables.value(matched.table, matched.row, rule.column)
        if matched.table and matched.row and rule.column
        else None
    )
    if published is None:
        if matched.table and rule.column:  # a row without this column (an empty cell)
            found.append(("no-value", f"no {rule.column} value in its row"))
            texts.append(found[-1][1])
        codes = tuple(code for code, _ in found)
        return Check(reference, rule.column, NO_NUMBER, codes, tuple(texts), run_top1)
    codes = tuple(code for code, _ in found)
    published_pp = 100.0 * published
    diff = None if run_top1 is None else run_top1 - published_pp
    if rule.status == NOT_COMPARABLE or diff is None:
        return Check(
            reference, rule.column, rule.status, codes, tuple(texts), run_top1, published_pp, diff
        )
    allowed = protocol_tolerance if rule.classifier_differs else tolerance
    if rule.full_images is not None:
        allowed += sampling_pp(published, n_images, rule.full_images)
    return Check(
        reference,
        rule.column,
        rule.status,
        codes,
        tuple(texts),
        run_top1,
        published_pp,
        diff,
        allowed,
        int(abs(diff) > allowed),
    )


def check_model(
    evaluations: list[tuple[Path, Path]],
    tolerance: float,
    protocol_tolerance: float,
    names_file: Path | None = None,
    tables: Tables | None = None,
) -> list:
    """One record (task `published-check`) per zero-shot evaluation of one model: `evaluations`
    holds each test set's (record, test-set folder or manifest)."""
    from vlstress import provenance
    from vlstress.io import sha256_file
    from vlstress.record import assemble, read_record
    from vlstress.testsets import manifest as testsets

    if not evaluations:
        raise VlstressError("no zero-shot evaluation to check against the published numbers")
    tables = read_tables() if tables is None else tables
    names = read_timm_names(names_file)
    inputs = dict(tables.inputs)
    shipped = names_file is None
    names_label = shipped_name(names.source) if shipped else str(names.source)
    if names.found:
        inputs[names_label] = sha256_file(names.source)
    found = []
    for record_path, testset_path in evaluations:
        record = read_record(record_path)
        data = testsets.load(testset_path)
        model = record.provenance.get("model") or {}
        matched = match_model(model, tables, names)
        rule = protocol(set_facts(data, record), str(model.get("kind")))
        result = check(
            record.metrics.get("top1"),
            matched,
            rule,
            tables,
            int(record.dataset.get("n_images", len(data.images))),
            tolerance,
            protocol_tolerance,
        )
        block = provenance.build(
            "published-check",
            {
                "tolerance": tolerance,
                "protocol_tolerance": protocol_tolerance,
                "timm_names": names_label if names.found else None,
            },
            model=model,
            inputs={
                **inputs,
                str(record_path): sha256_file(record_path),
                str(testsets.manifest_path(testset_path)): sha256_file(
                    testsets.manifest_path(testset_path)
                ),
            },
        )
        block["reasons"] = list(result.reasons)  # in words, with their numbers
        found.append(
            assemble(
                TASK,
                dataset=dict(record.dataset),
                condition=result.condition(),
                metrics=result.metrics(),
                provenance=block,
            )
        )
    return found
