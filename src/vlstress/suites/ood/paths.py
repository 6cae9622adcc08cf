"""The OOD sets the params make (pure functions: the embedding job reads them)."""

from __future__ import annotations

from vlstress.params import Params
from vlstress.suites.ood.block import OodParams

SUITE = "ood"
OOD_SET = "data/ood/{oodset}"
OOD_EMB = "ood/{oodset}.npy"  # inside the model's zero-shot folder
RECORD_NAME = "ood-{oodset}.json"  # in the model's record folder
FIGURE_NAME = "ood_roc_{model}_{oodset}.png"  # in the figures folder (a PDF beside it)


def names(params: Params) -> list[str]:
    return sorted(params.block(OodParams).sets) if SUITE in params.on else []


def folders(params: Params) -> list[str]:
    return [OOD_SET.format(oodset=name) for name in names(params)]


def data_folders(params: Params) -> list[str]:
    return ["data/ood"] if SUITE in params.on else []


def shaping_params(params: Params) -> list[str]:
    return ["ood.sets"] if SUITE in params.on else []
