"""Offline NLP resources: WordNet install (idempotent, sources in order), clear errors, word
classes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from vlstress.errors import VlstressError
from vlstress.suites.rococo_text import nlp


def fake_debian_dir(folder):
    """A folder laid out like Debian's /usr/share/wordnet (no lexnames), files as stubs."""
    folder.mkdir(parents=True)
    for name in nlp.REQUIRED_FILES:
        if name != "lexnames":
            (folder / name).write_text(f"stub {name}\n")
    (folder / "cntlist.rev").write_text("stub\n")
    return folder


def test_lexnames_table_is_wordnets():
    lines = nlp.lexnames_text().splitlines()
    assert len(lines) == 45
    assert lines[0] == "00\tadj.all\t3"
    assert lines[5] == "05\tnoun.animal\t1"
    assert lines[18] == "18\tnoun.person\t1"
    assert lines[44] == "44\tadj.ppl\t3"


def test_sources_inside_the_environment_or_checkout_are_named_the_same_on_every_machine():
    assert (
        nlp.portable(Path(sys.prefix) / "nltk_data" / "corpora" / "wordnet")
        == "<python prefix>/nltk_data/corpora/wordnet"
    )
    assert nlp.portable(nlp.CHECKOUT_NLTK_DATA / "corpora") == "<checkout>/data/nltk_data/corpora"
    assert nlp.portable(Path("/usr/share/wordnet")) == "/usr/share/wordnet"


def test_install_copies_an_existing_install_and_is_idempotent(tmp_path, monkeypatch):
    import nltk

    monkeypatch.setattr(nltk.data, "path", [])
    monkeypatch.setattr(nlp, "CHECKOUT_NLTK_DATA", tmp_path / "no-checkout")
    monkeypatch.setattr(nlp, "DEBIAN_DIR", fake_debian_dir(tmp_path / "usr-share-wordnet"))
    out = tmp_path / "nltk_data"
    record = nlp.install_wordnet(out, ("copy",))
    folder = nlp.wordnet_folder(out)
    # outside the environment: as it is
    assert record["source"] == f"copy:{tmp_path / 'usr-share-wordnet'}"
    assert nlp.is_complete(folder)
    assert (folder / "lexnames").read_text() == nlp.lexnames_text()
    assert json.loads((folder / nlp.SOURCE_FILE).read_text())["source"] == record["source"]
    # a second run leaves the folder as it is
    before = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    assert nlp.install_wordnet(out, ("copy",)) == record
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == before


def test_install_tries_sources_in_order_and_fails_clearly(tmp_path, monkeypatch):
    tried = []
    monkeypatch.setitem(nlp.SOURCES, "copy", lambda dest: tried.append("copy"))
    monkeypatch.setitem(nlp.SOURCES, "nltk", lambda dest: tried.append("nltk"))
    monkeypatch.setitem(nlp.SOURCES, "debian", lambda dest: tried.append("debian"))
    with pytest.raises(VlstressError, match=r"no source worked.*vlstress nlp-data"):
        nlp.install_wordnet(tmp_path / "nltk_data")
    assert tried == ["copy", "nltk", "debian"]
    assert not (tmp_path / "nltk_data" / "corpora" / "wordnet").exists()  # nothing partial left
    with pytest.raises(VlstressError, match="unknown WordNet source"):
        nlp.install_wordnet(tmp_path / "x", ("ftp",))


def test_missing_wordnet_says_how_to_get_it(tmp_path, monkeypatch):
    import nltk

    monkeypatch.setattr(nltk.data, "path", [])
    monkeypatch.delenv("NLTK_DATA", raising=False)
    nlp.load_wordnet.cache_clear()
    try:
        with pytest.raises(VlstressError, match=r"WordNet .* not found .*vlstress nlp-data --out"):
            nlp.load_wordnet(str(tmp_path / "empty"))
    finally:
        nlp.load_wordnet.cache_clear()


def test_cli_missing_wordnet_exit_2(tmp_path):
    from conftest import run_cli

    (tmp_path / "m.json").write_text(
        json.dumps({"dataset": "t", "images": [{"image": "a.jpg", "caption": ["A dog."]}]})
    )
    env_free = run_cli(
        "text-variants",
        "--manifest",
        str(tmp_path / "m.json"),
        "--set",
        "danger",
        "--words",
        "weapon",
        "--strategy",
        "first",
        "--nltk-data",
        str(tmp_path / "none"),
        "--out",
        str(tmp_path / "o.json"),
        check=False,
        cwd=tmp_path,
    )
    if env_free.returncode == 0:
        pytest.skip("a WordNet install on nltk's default path was found")
    assert env_free.returncode == 2
    assert "vlstress nlp-data" in env_free.stderr
    assert not (tmp_path / "o.json").exists()


@pytest.fixture(scope="module")
def wc(nltk_data):
    return nlp.word_classes(str(nltk_data))


@pytest.mark.parametrize(
    "caption, nouns",
    [
        ("A man riding a horse on the beach.", {"man", "horse", "beach"}),
        ("Two dogs are sitting next to a red car", {"dogs", "car"}),
        ("a kitchen with two windows and metal sinks", {"kitchen", "windows"}),
        (
            "A person is riding a bicycle but there is a train in the background",
            {"person", "bicycle", "train", "background"},
        ),
    ],
)
def test_noun_test_in_context(wc, caption, nouns):
    from vlstress.suites.rococo_text.variants import caption_words

    words = [w for w in caption_words(caption) if w]
    found = {
        w
        for i, w in enumerate(words)
        if wc.is_noun(w, words[i - 1] if i else None, words[i + 1] if i + 1 < len(words) else None)
    }
    assert nouns <= found
    assert not found & {"riding", "sitting", "red", "is", "the", "two", "next"}


@pytest.mark.parametrize(
    "plural, singular",
    [
        ("men", "man"),
        ("women", "woman"),
        ("children", "child"),
        ("buses", "bus"),
        ("boxes", "box"),
        ("cities", "city"),
        ("glasses", "glass"),
        ("mice", "mouse"),
        ("knives", "knife"),
    ],
)
def test_number(wc, plural, singular):
    assert wc.is_plural(plural) and wc.lemma(plural) == singular
    assert not wc.is_plural(singular)
    assert wc.pluralize(singular) == plural


def test_inflect_like(wc):
    assert wc.inflect_like("dogs", "zebra") == "zebras"
    assert wc.inflect_like("men", "child") == "children"
    assert wc.inflect_like("dog", "zebra") == "zebra"
    assert wc.inflect_like("sheep", "cat") == "cat"  # sheep reads as singular
