"""Where the text stress-tests keep their caption sets, as pure functions of the params (no stage
declaration: the embedding job and the statistics read them)."""

from __future__ import annotations

from vlstress.params import Params
from vlstress.suites.rococo_text.block import TextVariantsParams

SUITE = "rococo_text"
TEXT_SET = "data/text_variants/{set}.json"
TEXT_SET_EMB = "text_variants/{set}.npy"  # inside the model's retrieval folder
EI_SCORES = "results/text/ei_scores.json"
NLTK_DATA = "{p.text_variants.nltk_data}"
SCORER_CARD = "results/text/scorer.json"


RECORD_NAME = "text-{set}.json"  # in the model's record folder


def set_names(params: Params) -> list[str]:
    """The caption sets the params make (sorted); none when off."""
    return sorted(params.block(TextVariantsParams).sets) if SUITE in params.on else []


def caption_sets(params: Params) -> list[str]:
    """Every caption-set file the params make (`set_names` order)."""
    return [TEXT_SET.format(set=name) for name in set_names(params)]


def folders(params: Params) -> list[str]:
    return ["data/text_variants"] if SUITE in params.on else []


def shaping_params(params: Params) -> list[str]:
    return ["text_variants.sets"] if SUITE in params.on else []
