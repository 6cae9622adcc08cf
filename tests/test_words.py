"""Word splitting and editing used by the caption sets and EI."""

from __future__ import annotations

import pytest

from vlstress.suites.rococo_text.words import (
    delete_word,
    match_case,
    replace_word,
    split_words,
    strip_punct,
    word_positions,
)

CAPTION = "A man with a red helmet on a small moped on a dirt road. "


def test_split_keeps_punctuation_attached():
    assert split_words(CAPTION)[-1] == "road."
    assert split_words("Girl blowing out the candle on an ice-cream ") == [
        "Girl",
        "blowing",
        "out",
        "the",
        "candle",
        "on",
        "an",
        "ice-cream",
    ]
    assert split_words("  ") == []
    assert split_words("a . b") == ["a", ".", "b"]


@pytest.mark.parametrize(
    "token, word",
    [
        ("Road.", "road"),
        ("ice-cream", "ice-cream"),
        ("man's", "man's"),
        ('"Hello!"', "hello"),
        ("(red)", "red"),
        (".", ""),
        ("--", ""),
        ("3.5", "3.5"),
        ("Café,", "café"),
    ],
)
def test_strip_punct(token, word):
    assert strip_punct(token) == word


def test_word_positions_skip_pure_punctuation():
    assert word_positions("A young girl inhales .") == [0, 1, 2, 3]
    assert word_positions("a . b --x") == [0, 2, 3]


def test_replace_keeps_punctuation_case_and_whitespace():
    assert (
        replace_word(CAPTION, 13, "path")
        == "A man with a red helmet on a small moped on a dirt path. "
    )
    assert (
        replace_word(CAPTION, 0, "the")
        == "The man with a red helmet on a small moped on a dirt road. "
    )
    assert (
        replace_word(CAPTION, 1, "woman")
        == "A woman with a red helmet on a small moped on a dirt road. "
    )
    assert replace_word("Hello,  (big) world", 1, "small") == "Hello,  (small) world"
    assert replace_word("NASA rocket", 0, "esa") == "ESA rocket"
    assert replace_word("a . b", 1, "!") == "a ! b"


def test_delete_word():
    assert delete_word(CAPTION, 1) == "A with a red helmet on a small moped on a dirt road. "
    assert delete_word(CAPTION, 13) == "A man with a red helmet on a small moped on a dirt. "
    assert delete_word(CAPTION, 0) == "man with a red helmet on a small moped on a dirt road. "
    assert delete_word("Hello, world", 0) == ", world"
    assert delete_word("a (red) car", 1) == "a () car"
    assert delete_word("a . b", 1) == "a b"
    assert delete_word("word", 0) == ""
    # exactly one word fewer, other tokens unchanged
    for pos in word_positions(CAPTION):
        rest = [strip_punct(t) for t in split_words(delete_word(CAPTION, pos))]
        expected = [strip_punct(t) for i, t in enumerate(split_words(CAPTION)) if i != pos]
        assert [w for w in rest if w] == expected


def test_positions_out_of_range():
    with pytest.raises(IndexError, match="position 5"):
        delete_word("a b", 5)
    with pytest.raises(IndexError):
        replace_word("a b", -1, "c")


def test_match_case():
    assert match_case("Dog", "cat") == "Cat"
    assert match_case("DOG", "cat") == "CAT"
    assert match_case("dog", "Cat") == "Cat"
    assert match_case("A", "the") == "The"
