"""Embedding influence (EI) of every word of every caption.

    EI(w, c) = 1 - cos(f(c), f(c without w))

f is the text encoder of a scorer model; "c without w" is `words.delete_word(c, position)`
(the word removed, its punctuation kept). Tokens that are pure punctuation are not words
and get no score. A high EI means the caption's embedding moves a lot when the word is
removed: the word is influential for the model.

Scores are rounded to `DECIMALS` places so that repeated runs give identical bytes
(the trimmed encoder's float noise is ~1e-7).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from vlstress.suites.rococo_text.words import (
    delete_word,
    split_words,
    strip_punct,
    word_positions,
)

DECIMALS = 6


@dataclass(frozen=True)
class CaptionRef:
    image: str
    caption_index: int  # index of the caption within its image's caption list
    caption: str


def deletion_variants(caption: str) -> list[tuple[int, str, str, str]]:
    """(position, token, word, caption without the word) for every word of the caption."""
    tokens = split_words(caption)
    return [
        (p, tokens[p], strip_punct(tokens[p]), delete_word(caption, p))
        for p in word_positions(caption)
    ]


def captions_of(entries: Iterable[dict[str, Any]]) -> list[CaptionRef]:
    """Manifest / official-format entries -> captions in file order."""
    refs: list[CaptionRef] = []
    for entry in entries:
        captions = [entry["caption"]] if isinstance(entry["caption"], str) else entry["caption"]
        refs.extend(CaptionRef(entry["image"], k, c) for k, c in enumerate(captions))
    return refs


def _round(value: float) -> float:
    return round(float(value), DECIMALS) + 0.0  # + 0.0 turns -0.0 into 0.0


def ei_scores(
    captions: Sequence[CaptionRef],
    encode,
    *,
    block_size: int = 512,
    progress=None,
) -> list[dict[str, Any]]:
    """EI records in caption order.

    encode(texts) -> L2-normalised float array, one row per text in input order
    (e.g. a partial of `encoders.encode_texts`). Captions are encoded in blocks of
    `block_size` together with all their deletion variants (one encoder call per block,
    so duplicates are shared and batches are length-sorted across the block).
    `progress(n)` is called after each block with the number of captions done.
    """
    records: list[dict[str, Any]] = []
    for start in range(0, len(captions), block_size):
        block = captions[start : start + block_size]
        variants = [deletion_variants(ref.caption) for ref in block]
        texts: list[str] = []
        for ref, vs in zip(block, variants):
            texts.append(ref.caption)
            texts.extend(v[3] for v in vs)
        emb = np.asarray(encode(texts), dtype=np.float64)
        row = 0
        for ref, vs in zip(block, variants):
            original = emb[row]
            words = []
            for k, (position, token, word, _) in enumerate(vs, start=1):
                cos = float(np.dot(original, emb[row + k]))
                words.append(
                    {"position": position, "token": token, "word": word, "ei": _round(1.0 - cos)}
                )
            records.append(
                {
                    "image": ref.image,
                    "caption_index": ref.caption_index,
                    "caption": ref.caption,
                    "words": words,
                }
            )
            row += 1 + len(vs)
        if progress is not None:
            progress(len(block))
    return records


def load_ei_scores(path) -> list[dict[str, Any]]:
    """The caption records of an `ei-scores` output file (raises VlstressError on a bad file)."""
    from vlstress.errors import VlstressError
    from vlstress.io import read_json

    data = read_json(path, "EI scores file")
    if not isinstance(data, dict) or not isinstance(data.get("captions"), list):
        raise VlstressError(
            f"EI scores file {path}: expected an object with a 'captions' list; run "
            "`vlstress ei-scores`"
        )
    return data["captions"]
