"""The OOD sets the params make (pure functions: the embedding job reads them)."""

from __future__ import annotations

from typing import Any

from vlstress.workflow.paths import suites_on

SUITE = "ood"
OOD_SET = "data/ood/{oodset}"
OOD_EMB = "ood/{oodset}.npy"  # inside the model's zero-shot folder


def names(params: dict[str, Any]) -> list[str]:
    return sorted(str(name) for name in params["ood"]["sets"]) if SUITE in suites_on(params) else []


def folders(params: dict[str, Any]) -> list[str]:
    return [OOD_SET.format(oodset=name) for name in names(params)]


def data_folders(params: dict[str, Any]) -> list[str]:
    return ["data/ood"] if SUITE in suites_on(params) else []


def shaping_params(params: dict[str, Any]) -> list[str]:
    return ["ood.sets"] if SUITE in suites_on(params) else []
