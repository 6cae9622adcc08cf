"""Offline NLP resources: WordNet 3.0 for nltk, installed into a project folder.

nltk normally downloads its data at run time; this project installs it once into
`data/nltk_data` (params `text_variants.nltk_data`) with `vlstress nlp-data`, from
the first source that works:

- `present`: the folder already holds a readable WordNet (nothing to do);
- `copy`:    an existing install: nltk's own search path (`~/nltk_data`, `$NLTK_DATA`,
             ...), the data/nltk_data of the checkout this package is installed from
             (editable install), or Debian's `wordnet-base` at /usr/share/wordnet;
- `nltk`:    `nltk.download("wordnet")` (needs nltk's data server);
- `debian`:  `apt-get download wordnet-base` + `dpkg-deb -x`, no root needed (needs
             Debian's package archive, which is reachable wherever apt works).

All of them give the same WordNet 3.0 database in nltk's layout
(`<dir>/corpora/wordnet/{data,index}.{noun,verb,adj,adv}, *.exc, lexnames, cntlist.rev}`);
Debian's package lacks nltk's `lexnames` file, which is the fixed table of WordNet's 45
lexicographer files (lexnames(5WN)) and is written from `LEXNAMES` below.

Nothing else is needed: parts of speech come from WordNet (senses and sense-tagged
counts) plus a few context rules (`is_noun`), so no POS-tagger model is downloaded.
A missing resource raises a VlstressError that says how to get it.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path

from vlstress.errors import VlstressError
from vlstress.io import atomic_dir, sha256_file

log = logging.getLogger(__name__)

DEFAULT_NLTK_DATA = "data/nltk_data"
REQUIRED_FILES = tuple(
    f"{kind}.{pos}" for kind in ("data", "index") for pos in ("noun", "verb", "adj", "adv")
) + (
    "noun.exc",
    "verb.exc",
    "adj.exc",
    "adv.exc",
    "lexnames",
)
OPTIONAL_FILES = ("cntlist.rev", "index.sense", "LICENSE", "README", "citation.bib")
SOURCE_FILE = "vlstress-source.json"
DEBIAN_PACKAGE = "wordnet-base"
DEBIAN_DIR = Path("/usr/share/wordnet")
CHECKOUT = Path(__file__).resolve().parents[4]  # src/vlstress/suites/rococo_text/nlp.py -> repo
CHECKOUT_NLTK_DATA = CHECKOUT / DEFAULT_NLTK_DATA

# lexnames(5WN): number, name, syntactic category (1 noun, 2 verb, 3 adj, 4 adv).
LEXNAMES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute "
    "noun.body noun.cognition noun.communication noun.event noun.feeling noun.food noun.group "
    "noun.location noun.motive noun.object noun.person noun.phenomenon noun.plant "
    "noun.possession noun.process noun.quantity noun.relation noun.shape noun.state "
    "noun.substance noun.time verb.body verb.change verb.cognition verb.communication "
    "verb.competition verb.consumption verb.contact verb.creation verb.emotion verb.motion "
    "verb.perception verb.possession verb.social verb.stative verb.weather adj.ppl"
).split()
_CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}


def lexnames_text() -> str:
    return "".join(
        f"{i:02d}\t{name}\t{_CATEGORY[name.split('.')[0]]}\n" for i, name in enumerate(LEXNAMES)
    )


def how_to_get(nltk_data: str | Path) -> str:
    return (
        f"install it with `vlstress nlp-data --out {nltk_data}` (tries an existing install, then "
        f"nltk's data server, then Debian's `{DEBIAN_PACKAGE}` package), or by hand: "
        f"`python -m nltk.downloader -d {nltk_data} wordnet`, or "
        f"`apt-get install {DEBIAN_PACKAGE}` and then `vlstress nlp-data --out {nltk_data}`"
    )


def wordnet_folder(nltk_data: str | Path) -> Path:
    return Path(nltk_data) / "corpora" / "wordnet"


def is_complete(folder: Path) -> bool:
    return all((folder / name).is_file() for name in REQUIRED_FILES)


# --------------------------------------------------------------------------- loading


@functools.lru_cache(maxsize=4)
def load_wordnet(nltk_data: str | None = DEFAULT_NLTK_DATA):
    """nltk's WordNetCorpusReader on the project folder (or nltk's own paths when it holds none)."""
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    candidates = []
    if nltk_data:
        candidates.append(wordnet_folder(nltk_data))
    candidates += [
        Path(p) / "corpora" / "wordnet"
        for p in os.environ.get("NLTK_DATA", "").split(os.pathsep)
        if p
    ]
    candidates += [Path(str(p)) / "corpora" / "wordnet" for p in nltk.data.path]
    for folder in candidates:
        if is_complete(folder):
            root = str(folder.parent.parent.resolve())
            if root not in nltk.data.path:
                nltk.data.path.insert(0, root)  # nltk reads only below its data path
            log.debug("WordNet from %s", folder)
            with warnings.catch_warnings():
                # "multilingual functions are not available": not used here
                warnings.simplefilter("ignore")
                return _reader_class(WordNetCorpusReader)(str(folder.resolve()), None)
    where = nltk_data or "nltk's data path"
    raise VlstressError(
        f"WordNet (nltk data 'corpora/wordnet') not found in {where} nor on nltk's search path; "
        f"{how_to_get(nltk_data or DEFAULT_NLTK_DATA)}"
    )


def _reader_class(base):
    class EnglishWordNet(base):
        """nltk's reader, loading its index with plain file reads (same result, several times faster
        than nltk's seekable unicode stream) and without the WordNet-version map (only used for
        multilingual OMW data; it needs index.sense)."""

        def map_wn(self, version="wordnet"):
            return None

        def _lines(self, name):
            with open(self.abspath(name).path, encoding="utf8") as fh:
                yield from fh

        def _scan_satellites(self):
            self.satellite_offsets = {
                int(fields[0])
                for fields in (
                    line.split()
                    for line in self._lines("data.adj")
                    if line.strip() and not line.startswith(" ")
                )
                if len(fields) >= 3 and fields[2] == "s"
            }

        def _load_lemma_pos_offset_map(self):
            for suffix in self._FILEMAP.values():
                for i, line in enumerate(self._lines(f"index.{suffix}")):
                    if line.startswith(" "):
                        continue
                    tokens = line.split()
                    lemma, pos, n_synsets, n_pointers = (
                        tokens[0],
                        tokens[1],
                        int(tokens[2]),
                        int(tokens[3]),
                    )
                    start = 4 + n_pointers + 2  # pointer symbols, sense_cnt, tagsense_cnt
                    offsets = [int(t) for t in tokens[start : start + n_synsets]]
                    if len(offsets) != n_synsets:
                        raise VlstressError(
                            f"WordNet index.{suffix}, line {i + 1}: malformed; reinstall with "
                            "`vlstress nlp-data --force`"
                        )
                    self._lemma_pos_offset_map[lemma][pos] = offsets
                    if pos == "a":
                        self._lemma_pos_offset_map[lemma]["s"] = [
                            o for o in offsets if o in self.satellite_offsets
                        ]

        def _load_exception_map(self):
            for pos, suffix in self._FILEMAP.items():
                self._exception_map[pos] = {}
                for line in self._lines(f"{suffix}.exc"):
                    terms = line.split()
                    if terms:
                        self._exception_map[pos][terms[0]] = terms[1:]
            self._exception_map["s"] = self._exception_map["a"]

    return EnglishWordNet


# --------------------------------------------------------------------------- installing


def _copy_from_existing(dest: Path) -> str | None:
    import nltk

    # nltk's search path ($NLTK_DATA first), the checkout this package runs from (an editable
    # install: copies of the repository reuse its data/nltk_data offline), Debian's wordnet-base
    folders = [Path(str(p)) / "corpora" / "wordnet" for p in nltk.data.path] + [
        wordnet_folder(CHECKOUT_NLTK_DATA),
        DEBIAN_DIR,
    ]
    for folder in folders:
        if folder.resolve() == dest.resolve() or dest.resolve() in folder.resolve().parents:
            continue
        names = set(os.listdir(folder)) if folder.is_dir() else set()
        if {n for n in REQUIRED_FILES if n != "lexnames"} <= names:
            _copy_files(folder, dest)
            return f"copy:{portable(folder)}"
    return None


def portable(folder: Path) -> str:
    """The folder as the same on every machine: inside the Python environment or the checkout it is
    named relative to them (an absolute path would change the bytes, and dvc.lock, per checkout)."""
    for root, name in ((Path(sys.prefix), "<python prefix>"), (CHECKOUT, "<checkout>")):
        try:
            return f"{name}/{folder.resolve().relative_to(root.resolve()).as_posix()}"
        except ValueError:
            continue
    return str(folder)


def _from_nltk(dest: Path) -> str | None:
    import nltk

    with tempfile.TemporaryDirectory() as tmp:
        try:
            ok = nltk.download("wordnet", download_dir=tmp, quiet=True, raise_on_error=True)
        except Exception as exc:  # no network, server refused, ...
            log.info("nltk.download('wordnet') failed: %s", exc)
            return None
        if not ok:
            return None
        folder = Path(tmp) / "corpora" / "wordnet"
        if not folder.is_dir():
            import zipfile

            with zipfile.ZipFile(Path(tmp) / "corpora" / "wordnet.zip") as archive:
                archive.extractall(Path(tmp) / "corpora")
        _copy_files(folder, dest)
    return "nltk:wordnet"


def _from_debian(dest: Path) -> str | None:
    if not shutil.which("apt-get") or not shutil.which("dpkg-deb"):
        log.info("apt-get/dpkg-deb not available: not a Debian-like system")
        return None
    with tempfile.TemporaryDirectory() as tmp:
        cmd = ["apt-get", "download", DEBIAN_PACKAGE]
        result = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True)
        if result.returncode != 0 and hasattr(os, "geteuid") and os.geteuid() == 0:
            log.info(
                "apt-get download failed (%s); refreshing the package lists (apt-get update)",
                result.stderr.strip()[-200:],
            )
            subprocess.run(["apt-get", "update"], capture_output=True, text=True)
            result = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True)
        if result.returncode != 0:
            log.info(
                "`apt-get download %s` failed: %s", DEBIAN_PACKAGE, result.stderr.strip()[-300:]
            )
            return None
        debs = sorted(Path(tmp).glob(f"{DEBIAN_PACKAGE}_*.deb"))
        if not debs:
            return None
        subprocess.run(
            ["dpkg-deb", "-x", str(debs[0]), str(Path(tmp) / "x")], check=True, capture_output=True
        )
        _copy_files(Path(tmp) / "x" / str(DEBIAN_DIR).lstrip("/"), dest)
        return f"debian:{debs[0].name}"


def _copy_files(src: Path, dest: Path) -> None:
    for name in REQUIRED_FILES + OPTIONAL_FILES:
        if (src / name).is_file():
            shutil.copyfile(src / name, dest / name)
    if not (dest / "lexnames").is_file():
        (dest / "lexnames").write_text(lexnames_text(), encoding="utf-8")


SOURCES: dict[str, Callable[[Path], str | None]] = {
    "copy": _copy_from_existing,
    "nltk": _from_nltk,
    "debian": _from_debian,
}


def install_wordnet(
    nltk_data: str | Path = DEFAULT_NLTK_DATA,
    sources: tuple[str, ...] = ("copy", "nltk", "debian"),
    force: bool = False,
) -> dict:
    """Install WordNet into `<nltk_data>/corpora/wordnet` from the first source that works;
    idempotent."""
    folder = wordnet_folder(nltk_data)
    if is_complete(folder) and not force:
        log.info("WordNet already installed in %s", folder)
        return _record(folder, "present")
    for name in sources:
        if name not in SOURCES:
            raise VlstressError(f"unknown WordNet source {name!r}; known: {', '.join(SOURCES)}")
        try:
            with atomic_dir(folder) as tmp:
                source = SOURCES[name](tmp)
                if source is None or not is_complete(tmp):
                    raise _Unavailable(name)  # discards the temp folder, keeps any earlier install
                record = _record(tmp, source)
                (tmp / SOURCE_FILE).write_text(
                    json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8"
                )
        except _Unavailable:
            log.info("WordNet source %r: not available", name)
            continue
        log.info("WordNet installed in %s from %s", folder, source)
        load_wordnet.cache_clear()
        word_classes.cache_clear()
        return record
    raise VlstressError(
        f"could not install WordNet into {folder}: no source worked ({', '.join(sources)}); "
        f"{how_to_get(nltk_data)}"
    )


class _Unavailable(Exception):
    pass


def _record(folder: Path, source: str) -> dict:
    stored = folder / SOURCE_FILE
    if source == "present" and stored.is_file():
        return json.loads(stored.read_text(encoding="utf-8"))
    return {
        "source": source,
        "files": {
            name: sha256_file(folder / name)
            for name in sorted(REQUIRED_FILES)
            if (folder / name).is_file()
        },
    }


# --------------------------------------------------------------------------- word classes


@functools.lru_cache(maxsize=1)
def stopwords() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS) | {"s", "t", "don", "let", "lets", "ok", "yes"}


DETERMINERS = frozenset(
    "a an the this that these those some any each every another his her their its my your our "
    "two three four five six seven eight nine ten several many few".split()
)
VERB_CONTEXT = frozenset("to will would can could should must may might not".split())
# plurals WordNet lists as lemmas of their own (so morphy keeps them) and nouns with no -s plural
IRREGULAR_PLURALS = {"men": "man", "women": "woman", "people": "person", "children": "child"}
INVARIANT_PLURALS = frozenset("sheep fish deer news series species aircraft police".split())
SUBJECT_CONTEXT = frozenset("that which who it he she".split())


class WordClasses:
    """Noun test, number (singular/plural) and inflection on one WordNet reader."""

    def __init__(self, wn) -> None:
        self.wn = wn
        self._plural_exc: dict[str, str] | None = None
        self._counts: dict[str, int] | None = None

    # counts of sense-tagged occurrences (cntlist.rev) decide the most frequent part of speech
    def _tag_counts(self) -> dict[str, int]:
        if self._counts is None:
            table: dict[str, int] = {}
            try:
                with self.wn.open("cntlist.rev") as fh:
                    for line in fh:
                        parts = line.split()
                        if len(parts) == 3:
                            table[parts[0]] = int(parts[2])
            except OSError:
                log.warning(
                    "WordNet has no cntlist.rev: parts of speech decided without sense counts"
                )
            self._counts = table
        return self._counts

    @functools.cache
    def pos_counts(self, word: str) -> dict[str, int]:
        """Sense-tagged uses of `word` per part of speech (+1 when it has any sense of that
        part)."""
        tags = self._tag_counts()
        counts = {}
        for pos in ("n", "v", "a", "r"):
            names = {word, self.wn.morphy(word, pos)}
            synsets = self.wn.synsets(word, pos=pos)
            total = sum(
                tags.get(lemma.key(), 0)
                for synset in synsets
                for lemma in synset.lemmas()
                if lemma.name().lower() in names
            )
            counts[pos] = total + (1 if synsets else 0)
        return counts

    def has_noun_sense(self, word: str) -> bool:
        return bool(self.wn.synsets(word, pos="n"))

    def is_noun(self, word: str, prev: str | None = None, next_: str | None = None) -> bool:
        """Is `word` (lower-case, bare) a noun here? WordNet senses + counts + context, no tagger.

        A noun sense is required; the part of speech with most sense-tagged uses in
        WordNet's concordance (cntlist) wins, except that after a determiner or number
        ("a train", "two sinks") a verb reading loses, and after "to"/a modal or a
        relative pronoun ("to ride", "that needs") a noun reading loses.
        """
        if (
            len(word) < 3
            or not word.isalpha()
            or word in stopwords()
            or not self.has_noun_sense(word)
        ):
            return False
        counts = self.pos_counts(word)
        if counts["v"] and (prev in VERB_CONTEXT or prev in SUBJECT_CONTEXT):
            return False
        adj = max(counts["a"], counts["r"])
        if counts["n"] < adj:
            return False
        if prev in DETERMINERS and (
            next_ is None or next_ in stopwords() or not self.has_noun_sense(next_)
        ):
            return True
        return counts["n"] >= counts["v"]

    def lemma(self, word: str) -> str:
        """Singular (base) form of a noun: WordNet's irregular plurals, then regular suffix
        rules."""
        if word in IRREGULAR_PLURALS:
            return IRREGULAR_PLURALS[word]
        for base in self.wn._exception_map["n"].get(word, []):
            if base != word:
                return base
        if not word.endswith("ss"):
            for suffix, repl in (
                ("ies", "y"),
                ("ches", "ch"),
                ("shes", "sh"),
                ("xes", "x"),
                ("ses", "s"),
                ("zes", "z"),
                ("s", ""),
            ):
                if word.endswith(suffix) and len(word) > len(suffix) + 1:
                    base = word[: -len(suffix)] + repl
                    if self.wn.synsets(base, pos="n"):
                        return base
        return word

    def is_plural(self, word: str) -> bool:
        return self.lemma(word) != word

    def plural_exceptions(self) -> dict[str, str]:
        if self._plural_exc is None:
            table: dict[str, str] = {}
            for plural, bases in sorted(self.wn._exception_map["n"].items()):
                for base in bases:
                    if plural.isalpha() and base.isalpha() and plural != base:
                        # "busses"-style doubled spellings are variants, not the common plural
                        if not (
                            plural.startswith(base)
                            and plural.endswith("es")
                            and len(plural) == len(base) + 3
                        ):
                            table.setdefault(base, plural)
            self._plural_exc = table
        return self._plural_exc

    def pluralize(self, noun: str) -> str:
        if noun in INVARIANT_PLURALS:
            return noun
        for plural, base in IRREGULAR_PLURALS.items():
            if base == noun:
                return plural
        return self.plural_exceptions().get(noun) or pluralize_regular(noun)

    def inflect_like(self, original: str, replacement: str) -> str:
        """`replacement` (a base form) in the grammatical number of `original`."""
        if self.is_plural(original):
            return self.pluralize(self.lemma(replacement))
        return replacement


def pluralize_regular(noun: str) -> str:
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and len(noun) > 1 and noun[-2] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"


@functools.lru_cache(maxsize=4)
def word_classes(nltk_data: str | None = DEFAULT_NLTK_DATA) -> WordClasses:
    return WordClasses(load_wordnet(nltk_data))
