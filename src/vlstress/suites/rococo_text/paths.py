"""Where the text stress-tests keep their caption sets, as pure functions of the params (no stage
declaration: the embedding job and the statistics read them)."""

from __future__ import annotations

from typing import Any

from vlstress.workflow.paths import suites_on

SUITE = "rococo_text"
TEXT_SET = "data/text_variants/{set}.json"
TEXT_SET_EMB = "text_variants/{set}.npy"  # inside the model's retrieval folder
EI_SCORES = "results/text/ei_scores.json"
NLTK_DATA = "{p.text_variants.nltk_data}"
SCORER_CARD = "results/text/scorer.json"


def caption_sets(params: dict[str, Any]) -> list[str]:
    """Every caption-set file the params make (sorted names); none when off."""
    if SUITE not in suites_on(params):
        return []
    return [
        TEXT_SET.format(set=name)
        for name in sorted(str(key) for key in params["text_variants"]["sets"])
    ]


def folders(params: dict[str, Any]) -> list[str]:
    return ["data/text_variants"] if SUITE in suites_on(params) else []


def shaping_params(params: dict[str, Any]) -> list[str]:
    return ["text_variants.sets"] if SUITE in suites_on(params) else []
