"""The candidates of the pool, from the libraries' own registries: every (architecture, tag) of
open_clip, timm's ImageNet-1k classifiers (the testbed's, or all), the paper's six LLaVA models,
and the fine-tuned checkpoints of a params file. Each is a registry entry with its attributes."""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from vlstress.embedding.kinds import TIMM_PREFIX, model_kind
from vlstress.errors import VlstressError
from vlstress.pool import attributes

KINDS = ("open_clip", "timm", "llava", "finetuned")
TESTBED_NAMES = "data/published/testbed_timm_names.csv"
NAME_COLUMNS = ["testbed", "timm", "note"]
# the papers' six LLaVA models (LLaVA-1.5 and LLaVA-NeXT, i.e. v1.6), as the hub names them
LLAVA_IDS = tuple(attributes.LLAVA)
IN1K_HEAD = re.compile(r"(^|_)in1k(_\d+)?$")  # a timm tag whose head is ImageNet-1k's


@dataclass(frozen=True)
class Candidate:
    slug: str
    kind: str  # one of KINDS
    arch: str
    pretrained: str | None
    attributes: Mapping[str, Any]

    def entry(self) -> dict[str, Any]:
        return {
            "arch": self.arch,
            "pretrained": self.pretrained,
            "attributes": dict(self.attributes),
        }


def slug(*parts: str) -> str:
    """A registry slug of readable parts: lower case, `.` as `_` (DVC reads a dot as a path),
    anything else but letters, digits, `_`, `+` and `-` as `-`."""
    text = "-".join(parts).lower().replace(".", "_")
    return re.sub(r"[^a-z0-9_+-]", "-", text)


def testbed_names() -> list[dict[str, str]]:
    """The rows of the shipped testbed -> timm name map (`testbed`, `timm`, `note`)."""
    text = resources.files("vlstress").joinpath(TESTBED_NAMES).read_text(encoding="utf-8")
    reader = csv.DictReader(text.splitlines())
    if reader.fieldnames != NAME_COLUMNS:
        raise VlstressError(f"{TESTBED_NAMES}: columns {reader.fieldnames}, not {NAME_COLUMNS}")
    return list(reader)


def open_clip_candidates(pairs: Iterable[tuple[str, str]], count) -> list[Candidate]:
    """One candidate per (architecture, tag); a hub repository (`hf-hub:...`) is left out."""
    found = []
    for arch, tag in pairs:
        if arch.startswith(attributes.HF_HUB):
            continue
        found.append(
            Candidate(
                slug(arch, tag),
                "open_clip",
                arch,
                tag,
                count(attributes.derive(arch, tag, "hub"), arch, tag),
            )
        )
    return found


def timm_candidates(names: Iterable[str], count) -> list[Candidate]:
    """One candidate per timm pretrained name `name.tag` (ImageNet-1k heads only)."""
    found = []
    for full in names:
        name, _, tag = full.partition(".")
        if not tag or not IN1K_HEAD.search(tag):
            raise VlstressError(f"timm model {full!r}: not an ImageNet-1k classifier (name.tag)")
        arch = f"{TIMM_PREFIX}{name}"
        found.append(
            Candidate(
                slug(name, tag),
                "timm",
                arch,
                tag,
                count(attributes.derive(arch, tag, "hub"), arch, tag),
            )
        )
    return found


def llava_candidates() -> list[Candidate]:
    return [
        Candidate(
            slug(hub_id.split("/")[1].removesuffix("-hf").replace(".", "-")),
            "llava",
            "llava",
            hub_id,
            attributes.derive("llava", hub_id, "hub"),
        )
        for hub_id in LLAVA_IDS
    ]


def finetuned_candidates(models: Mapping[str, Mapping[str, Any]], count) -> list[Candidate]:
    """The image-text models of a registry whose weights are a local checkpoint (the fine-tuned
    variants): their entries again, with their attributes (method and base where the checkpoint's
    sidecar is there to say them)."""
    found = []
    for key, entry in models.items():
        arch, pretrained = str(entry["arch"]), entry.get("pretrained")
        if model_kind(arch) != "open_clip" or not pretrained or "/" not in str(pretrained):
            continue
        found.append(
            Candidate(
                key,
                "finetuned",
                arch,
                pretrained,
                count(attributes.of(arch, pretrained, "checkpoint"), arch, None),
            )
        )
    return found


def unique(candidates: list[Candidate]) -> list[Candidate]:
    """The candidates, refused when two share a slug."""
    seen: dict[str, Candidate] = {}
    for candidate in candidates:
        other = seen.setdefault(candidate.slug, candidate)
        if other is not candidate:
            raise VlstressError(
                f"slug {candidate.slug!r} names both {other.arch} {other.pretrained} and "
                f"{candidate.arch} {candidate.pretrained}"
            )
    return candidates
