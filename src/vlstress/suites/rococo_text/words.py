"""Word-level caption editing shared by the text stress-tests.

A caption is split on whitespace into *tokens*; punctuation stays attached to its
token ("road." is one token). The *word* of a token is the token without its leading
and trailing punctuation, lower-cased ("Road." -> "road"; "ice-cream" and "man's"
keep their inner punctuation). Tokens with no word (pure punctuation such as "." or
"--") are not words: `word_positions` skips them and EI does not score them.

Positions are 0-based token indices into `split_words(caption)`. Editing functions
change only the addressed token and keep every other character of the caption
(including its whitespace) as it was.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"\S+")


def split_words(caption: str) -> list[str]:
    """Whitespace tokens of `caption`, punctuation attached as written."""
    return _TOKEN.findall(caption)


def _parts(token: str) -> tuple[str, str, str]:
    """(leading punctuation, core, trailing punctuation) of one token; core is "" for pure
    punctuation."""
    alnum = [i for i, ch in enumerate(token) if ch.isalnum()]
    if not alnum:  # pure punctuation
        return token, "", ""
    first, last = alnum[0], alnum[-1] + 1
    return token[:first], token[first:last], token[last:]


def strip_punct(token: str) -> str:
    """The bare, lower-case word of a token ("Road." -> "road"); "" for pure punctuation."""
    return _parts(token)[1].lower()


def word_positions(caption: str) -> list[int]:
    """Positions of the tokens that carry a word (pure-punctuation tokens skipped)."""
    return [i for i, tok in enumerate(split_words(caption)) if strip_punct(tok)]


def _spans(caption: str) -> list[tuple[int, int]]:
    return [m.span() for m in _TOKEN.finditer(caption)]


def _check_position(caption: str, spans: list, position: int) -> None:
    if not isinstance(position, int) or isinstance(position, bool):
        raise TypeError(f"position must be an int, got {type(position).__name__}")
    if not 0 <= position < len(spans):
        raise IndexError(
            f"word position {position} out of range for caption with {len(spans)} tokens: "
            f"{caption!r}"
        )


def match_case(template: str, word: str) -> str:
    """`word` written in the capitalisation of `template` (UPPER, Title, or as given)."""
    if not template or not word:
        return word
    letters = [c for c in template if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return word.upper()
    if template[0].isupper():
        return word[0].upper() + word[1:]
    return word


def replace_word(caption: str, position: int, new: str) -> str:
    """Replace the word of token `position` by `new`, keeping its punctuation and capitalisation.

    "A man riding." with (2, "walking") -> "A man walking."; (0, "the") -> "The man riding.".
    `new` is inserted as given apart from the capitalisation copied from the old word
    (all-caps or first letter upper). A pure-punctuation token is replaced whole.
    """
    spans = _spans(caption)
    _check_position(caption, spans, position)
    start, end = spans[position]
    lead, core, trail = _parts(caption[start:end])
    if not core:
        return caption[:start] + new + caption[end:]
    return caption[:start] + lead + match_case(core, new) + trail + caption[end:]


def delete_word(caption: str, position: int) -> str:
    """The caption without the word of token `position`.

    The word and one whitespace run beside it are removed; the token's own
    punctuation is kept, glued to the neighbouring token ("on a road." without
    "road." -> "on a."), so the result differs from the caption only by the word.
    Capitalisation of the other tokens is unchanged. A pure-punctuation token is
    removed whole.
    """
    spans = _spans(caption)
    _check_position(caption, spans, position)
    start, end = spans[position]
    lead, core, trail = _parts(caption[start:end])
    if not core:
        lead, trail = "", ""
    keep = lead + trail  # the token's punctuation survives the deletion
    if position > 0 and not lead:
        # drop the whitespace before the token: trailing punctuation joins the previous token
        return caption[: spans[position - 1][1]] + keep + caption[end:]
    if position + 1 < len(spans) and not trail:
        # drop the whitespace after the token: leading punctuation joins the next token
        return caption[:start] + keep + caption[spans[position + 1][0] :]
    if keep:
        return caption[:start] + keep + caption[end:]
    if position > 0:
        return caption[: spans[position - 1][1]] + caption[end:]
    return caption[:start] + caption[end:]
