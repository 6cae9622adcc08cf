"""The four RoCOCO-style caption sets: one noun of each caption replaced.

For every caption the *position* of the replaced word is chosen once, by a
strategy over the caption's candidate nouns and their EI scores (default:
`lowest-ei`, the noun whose deletion changes the embedding least), and shared by
all sets. Each set then picks the replacement word with its own seeded RNG:

- same-concept: a noun of the same concept (concepts.py), e.g. man -> child;
- diff-concept: a noun of another concept, e.g. table -> rain;
- rand-voca:    any word of the general vocabulary (vlstress/data/vocabulary.tsv);
- danger:       a word of a fixed list (default weapon, criminal, minefield).

Replacements never repeat a word of the image's own captions, are never a
synonym, hypernym or hyponym of the replaced noun (same-/diff-concept), and take
the replaced noun's number (plural stays plural). A set is written in the official
RoCOCO format: [{"image", "caption": [originals..., altered...]}], altered k replacing
one word of original k. Adding a kind or a strategy is one registry entry.
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from vlstress.errors import VlstressError
from vlstress.io import read_json
from vlstress.suites.rococo_text.concepts import is_concrete
from vlstress.suites.rococo_text.words import replace_word, split_words, strip_punct

log = logging.getLogger(__name__)

OFFICIAL_SETS = ("same_concept", "diff_concept", "rand_voca", "danger")
DEFAULT_DANGER_WORDS = ("weapon", "criminal", "minefield")


# --------------------------------------------------------------------------- EI scores


def load_ei_scores(path: str | Path) -> dict[tuple[str, str], dict[int, float]]:
    """(image, caption) -> {position: ei} from `vlstress ei-scores` output."""
    return load_ei_scores_data(read_json(path, "EI scores"), str(path))


def load_ei_scores_data(
    data: Any, source: str = "EI scores"
) -> dict[tuple[str, str], dict[int, float]]:
    entries = data.get("captions") if isinstance(data, dict) else data
    if not isinstance(entries, list):
        raise VlstressError(
            f"EI scores {source}: expected a list of {{image, caption, words}} entries; re-run "
            "`vlstress ei-scores`"
        )
    table: dict[tuple[str, str], dict[int, float]] = {}
    for pos, entry in enumerate(entries):
        try:
            table[(entry["image"], entry["caption"])] = {
                int(w["position"]): float(w["ei"]) for w in entry["words"]
            }
        except (KeyError, TypeError, ValueError):
            raise VlstressError(
                f"EI scores {source}: entry {pos} lacks image/caption/words[position, ei]"
            ) from None
    return table


# --------------------------------------------------------------------------- choosing the position


@dataclass(frozen=True)
class Candidate:
    position: int
    word: str  # bare lower-case word
    ei: float  # nan when unknown


def caption_words(caption: str) -> list[str]:
    return [strip_punct(tok) for tok in split_words(caption)]


def noun_candidates(
    caption: str, ei: dict[int, float], word_classes
) -> tuple[list[Candidate], int]:
    """Candidate nouns of a caption and the fallback level used (0 nouns, 1 content words, 2 any
    word)."""
    words = caption_words(caption)
    present = [i for i, w in enumerate(words) if w]

    def neighbour(i: int, step: int) -> str | None:
        j = present.index(i) + step
        return words[present[j]] if 0 <= j < len(present) else None

    def cand(i: int) -> Candidate:
        return Candidate(i, words[i], ei.get(i, math.nan))

    nouns = [
        cand(i)
        for i in present
        if word_classes.is_noun(words[i], neighbour(i, -1), neighbour(i, 1))
    ]
    if nouns:
        return nouns, 0
    from vlstress.suites.rococo_text.nlp import stopwords

    content = [cand(i) for i in present if words[i].isalpha() and words[i] not in stopwords()]
    if content:
        return content, 1
    return [cand(i) for i in present], 2


def _ei_key(c: Candidate, sign: float) -> tuple:
    return (math.isnan(c.ei), sign * (0.0 if math.isnan(c.ei) else c.ei), c.position)


STRATEGIES: dict[str, Callable[[Sequence[Candidate], np.random.Generator], Candidate]] = {
    "lowest-ei": lambda cands, rng: min(cands, key=lambda c: _ei_key(c, 1.0)),
    "highest-ei": lambda cands, rng: min(cands, key=lambda c: _ei_key(c, -1.0)),
    "random": lambda cands, rng: cands[int(rng.integers(len(cands)))],
    "first": lambda cands, rng: cands[0],
}


def stable_rng(*parts: Any) -> np.random.Generator:
    """An RNG seeded by the parts' text (independent of order of processing and of Python's hash
    seed)."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8")).digest()
    return np.random.default_rng(
        [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)]
    )


# --------------------------------------------------------------------------- replacement pools


@dataclass
class Pools:
    """Replacement words (base forms) by concept, in tiers tried in order (see POOL_MODES):
    the dataset's caption nouns and the general vocabulary's nouns (concepts precomputed)."""

    concepts: Any
    caption_nouns: list[str]
    vocabulary_nouns: dict[str, str]  # base form -> concept
    mode: str = "caption-first"
    _by_concept: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.mode not in POOL_MODES:
            raise VlstressError(f"unknown pool {self.mode!r}; known: {', '.join(POOL_MODES)}")
        caption = {w: self.concepts.concept(w) for w in sorted(set(self.caption_nouns))}
        self.tiers = POOL_MODES[self.mode](
            {w: c for w, c in caption.items() if c}, self.vocabulary_nouns
        )
        self.tier_concepts = []
        for tier in self.tiers:
            by_concept: dict[str, list[str]] = {}
            for word in sorted(tier):
                by_concept.setdefault(tier[word], []).append(word)
            self.tier_concepts.append(by_concept)

    def _pool(self, tier: int, concept: str | None, same: bool) -> list[str]:
        key = (tier, concept, same)
        if key not in self._by_concept:
            by_concept = self.tier_concepts[tier]
            if same:
                self._by_concept[key] = by_concept.get(concept, []) if concept is not None else []
            else:
                # another concept, and a concrete one: "table -> rain", not "table -> idea"
                self._by_concept[key] = [
                    w
                    for c, words in sorted(by_concept.items())
                    if c != concept and is_concrete(c)
                    for w in words
                ]
        return self._by_concept[key]

    def pick(
        self, original: str, same: bool, exclude: set[str], rng: np.random.Generator
    ) -> tuple[str | None, int]:
        """A base-form noun of the same (or another) concept; returns (word, tier) or (None, -1)."""
        concept = self.concepts.concept(original)

        def ok(word: str) -> bool:
            return word not in exclude and self.concepts.is_different(original, word)

        for tier in range(len(self.tiers)):
            pool = self._pool(tier, concept, same)
            if not pool:
                continue
            for _ in range(64):  # random draws first: cheap for large pools
                word = pool[int(rng.integers(len(pool)))]
                if ok(word):
                    return word, tier
            rest = [w for w in pool if ok(w)]
            if rest:
                return rest[int(rng.integers(len(rest)))], tier
        return None, -1


POOL_MODES: dict[str, Callable[[dict, dict], list[dict]]] = {
    "caption-first": lambda caption, vocab: [caption, vocab],
    "caption": lambda caption, vocab: [caption],
    "vocabulary": lambda caption, vocab: [vocab],
    "union": lambda caption, vocab: [{**vocab, **caption}],
}


# --------------------------------------------------------------------------- set kinds


@dataclass
class Context:
    word_classes: Any
    concepts: Any
    pools: Pools | None
    vocabulary: list[str]
    words: list[str] | None  # the kind's fixed word list (danger), or an override of its pool


def _pools(ctx: Context) -> Pools:
    """The context's replacement pools (kinds with `needs_pools` get them unless a word list is
    given)."""
    if ctx.pools is None:
        raise VlstressError("this caption-set kind needs replacement pools, and none were built")
    return ctx.pools


def _same_concept(ctx: Context, lemma: str, exclude: set[str], rng) -> tuple[str | None, str]:
    if ctx.words:
        return _from_list(ctx, lemma, exclude, rng)
    word, tier = _pools(ctx).pick(lemma, True, exclude, rng)
    return word, f"tier{tier}" if word else "none"


def _diff_concept(ctx: Context, lemma: str, exclude: set[str], rng) -> tuple[str | None, str]:
    if ctx.words:
        return _from_list(ctx, lemma, exclude, rng)
    word, tier = _pools(ctx).pick(lemma, False, exclude, rng)
    return word, f"tier{tier}" if word else "none"


def _rand_voca(ctx: Context, lemma: str, exclude: set[str], rng) -> tuple[str | None, str]:
    pool = ctx.words or ctx.vocabulary
    for _ in range(100):
        word = pool[int(rng.integers(len(pool)))]
        if word not in exclude and word != lemma:
            return word, "vocabulary"
    return None, "none"


def _from_list(ctx: Context, lemma: str, exclude: set[str], rng) -> tuple[str | None, str]:
    pool = [w for w in (ctx.words or []) if w != lemma and w not in exclude] or [
        w for w in ctx.words or [] if w != lemma
    ]
    if not pool:
        return None, "none"
    return pool[int(rng.integers(len(pool)))], "list"


@dataclass(frozen=True)
class SetKind:
    """One kind of caption set: how it picks the replacement word, and what it needs."""

    # -> (word or None, source)
    replace: Callable[[Context, str, set, np.random.Generator], tuple[str | None, str]]
    description: str
    # replacement pools by concept (Pools), unless a word list replaces them
    needs_pools: bool = False
    needs_words: bool = False  # a fixed word list is required
    # the official RoCOCO set generated by this kind when --kind is not given
    official_set: str | None = None


KINDS: dict[str, SetKind] = {
    "same-concept": SetKind(
        _same_concept, "a noun of the same concept", needs_pools=True, official_set="same_concept"
    ),
    "diff-concept": SetKind(
        _diff_concept,
        "a noun of another (concrete) concept",
        needs_pools=True,
        official_set="diff_concept",
    ),
    "rand-voca": SetKind(
        _rand_voca, "any word of the general vocabulary", official_set="rand_voca"
    ),
    "danger": SetKind(
        _from_list, "a word of a fixed list", needs_words=True, official_set="danger"
    ),
}


def default_kind(set_name: str) -> str | None:
    """The kind that generates the official set `set_name` (None for other names)."""
    return next((name for name, kind in KINDS.items() if kind.official_set == set_name), None)


def set_kind(kind: str, set_name: str) -> SetKind:
    """The registry entry of `kind` (errors name the set)."""
    if kind not in KINDS:
        raise VlstressError(f"set {set_name!r}: unknown kind {kind!r}; known: {', '.join(KINDS)}")
    return KINDS[kind]


def needs_pools(kind: str, set_name: str, words: Sequence[str] | None) -> bool:
    """Whether generating `kind` needs Pools (a word list, when given, replaces them)."""
    return set_kind(kind, set_name).needs_pools and not words


# --------------------------------------------------------------------------- generation


@dataclass
class GeneratedSet:
    entries: list[dict[str, Any]]  # official format
    records: list[dict[str, Any]]  # one per altered caption
    counts: dict[str, int]


def choose_positions(
    entries: list[dict[str, Any]],
    ei: dict[tuple[str, str], dict[int, float]] | None,
    word_classes,
    strategy: str,
    strategy_seed: int,
) -> list[list[tuple[Candidate, int]]]:
    """The replaced word of every caption (shared by all sets): [[(candidate, fallback level)]]."""
    if strategy not in STRATEGIES:
        raise VlstressError(f"unknown strategy {strategy!r}; known: {', '.join(STRATEGIES)}")
    chosen = []
    for entry in tqdm(entries, desc="candidate nouns", unit="image"):
        row = []
        for k, caption in enumerate(_captions(entry)):
            scores = {}
            if ei is not None:
                if (entry["image"], caption) not in ei:
                    raise VlstressError(
                        f"EI scores lack caption {k} of image {entry['image']!r} ({caption!r}); "
                        "re-run `vlstress ei-scores` on this manifest"
                    )
                scores = ei[(entry["image"], caption)]
            cands, level = noun_candidates(caption, scores, word_classes)
            if not cands:
                raise VlstressError(
                    f"caption {k} of image {entry['image']!r} has no word to replace: {caption!r}"
                )
            row.append(
                (
                    STRATEGIES[strategy](
                        cands, stable_rng("strategy", strategy_seed, entry["image"], k)
                    ),
                    level,
                )
            )
        chosen.append(row)
    return chosen


def _captions(entry: dict[str, Any]) -> list[str]:
    return [entry["caption"]] if isinstance(entry["caption"], str) else list(entry["caption"])


def generate_set(
    entries: list[dict[str, Any]],
    positions: list[list[tuple[Candidate, int]]],
    *,
    set_name: str,
    kind: str,
    seed: int,
    ctx: Context,
) -> GeneratedSet:
    kind_entry = set_kind(kind, set_name)
    if kind_entry.needs_words and not ctx.words:
        raise VlstressError(
            f"set {set_name!r}: kind {kind} needs a word list (text_variants.sets.{set_name}.words)"
        )
    wc = ctx.word_classes
    out, records = [], []
    counts = {
        "captions": 0,
        "fallback_content_word": 0,
        "fallback_any_word": 0,
        "no_replacement": 0,
        "pool_vocabulary": 0,
    }
    for entry, row in zip(tqdm(entries, desc=set_name, unit="image"), positions):
        captions = _captions(entry)
        image_words = {w for c in captions for w in caption_words(c) if w}
        exclude = image_words | {wc.lemma(w) for w in image_words}
        altered = []
        for k, (caption, (cand, level)) in enumerate(zip(captions, row)):
            rng = stable_rng("replacement", set_name, seed, entry["image"], k)
            lemma = wc.lemma(cand.word) if level == 0 else cand.word
            new, how = kind_entry.replace(ctx, lemma, exclude, rng)
            if new is None:  # nothing left in the pool: take any vocabulary word
                new, how = _rand_voca(ctx, lemma, exclude, rng)
                counts["no_replacement"] += 1
            if new is None:
                raise VlstressError(
                    f"set {set_name!r}: no replacement for {cand.word!r} in image "
                    f"{entry['image']!r}"
                )
            if how == "tier1":
                counts["pool_vocabulary"] += 1
            inflected = (
                wc.inflect_like(cand.word, new) if (level == 0 and wc.has_noun_sense(new)) else new
            )
            altered.append(replace_word(caption, cand.position, inflected))
            counts["captions"] += 1
            counts["fallback_content_word"] += level == 1
            counts["fallback_any_word"] += level == 2
            records.append(
                {
                    "image": entry["image"],
                    "caption_index": k,
                    "position": cand.position,
                    "ei": None if math.isnan(cand.ei) else round(cand.ei, 6),
                    "original": cand.word,
                    "replacement": inflected,
                    "candidate": ["noun", "content-word", "any-word"][level],
                    "concept_original": ctx.concepts.concept(lemma) if level == 0 else None,
                    "concept_replacement": ctx.concepts.concept(wc.lemma(new))
                    if wc.has_noun_sense(new)
                    else None,
                    "source": how,
                }
            )
        out.append({"image": entry["image"], "caption": captions + altered})
    return GeneratedSet(entries=out, records=records, counts=counts)


def caption_nouns(entries: list[dict[str, Any]], word_classes) -> list[str]:
    """Base forms of the nouns of all captions (the dataset's caption vocabulary)."""
    nouns = set()
    for entry in entries:
        for caption in _captions(entry):
            words = [w for w in caption_words(caption) if w]
            for i, word in enumerate(words):
                prev = words[i - 1] if i else None
                nxt = words[i + 1] if i + 1 < len(words) else None
                if word_classes.is_noun(word, prev, nxt):
                    nouns.add(word_classes.lemma(word))
    return sorted(nouns)


# --------------------------------------------------------------------------- official sets

_DIGITS = re.compile(r"(\d+)")


def coco_id(entry: dict[str, Any]) -> int | None:
    """The COCO image id of a manifest/official entry (`image_id`, else the last digits of
    `image`)."""
    if entry.get("image_id") not in (None, ""):
        try:
            return int(str(entry["image_id"]))
        except ValueError:
            pass
    found = _DIGITS.findall(Path(str(entry["image"])).name)
    return int(found[-1]) if found else None


def official_path(
    official_dir: str | Path | None, raw: str | Path | None, set_name: str
) -> Path | None:
    for folder in ([Path(official_dir)] if official_dir else []) + (
        [Path(raw) / "rococo"] if raw else []
    ):
        path = folder / f"{set_name}.json"
        if path.is_file():
            return path
    return None


def load_official(
    path: Path, manifest_entries: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], int]:
    """Official entries of the manifest's images (manifest order, `image` rewritten); and how many
    matched."""
    data = read_json(path, "official RoCOCO set")
    if not isinstance(data, list):
        raise VlstressError(
            f"official RoCOCO set {path}: expected a list of {{image, caption}} entries"
        )
    by_id: dict[int | None, dict[str, Any]] = {}
    for entry in data:
        if isinstance(entry, dict) and "image" in entry and "caption" in entry:
            by_id.setdefault(coco_id(entry), entry)
    out = []
    for entry in manifest_entries:
        found = by_id.get(coco_id(entry))
        if found is not None:
            check_official_entry(found, entry, path)
            out.append({"image": entry["image"], "caption": list(found["caption"])})
    return out, len(out)


# The released files alter only the first five captions: an image with more than five
# originals (10 such images in the 5k test split, 6 + 5) carries five altered captions.
OFFICIAL_ALTERED_MAX = 5


def expected_altered(n_originals: int) -> int:
    return min(n_originals, OFFICIAL_ALTERED_MAX)


def fewer_altered(entries: list[dict[str, Any]], manifest_entries: list[dict[str, Any]]) -> int:
    """How many entries use the documented exception (fewer altered than original captions)."""
    originals = {e["image"]: len(_captions(e)) for e in manifest_entries}
    return sum(
        1 for e in entries if len(_captions(e)) - originals[e["image"]] < originals[e["image"]]
    )


def check_official_entry(found: dict[str, Any], manifest_entry: dict[str, Any], path: Path) -> None:
    """An official entry = the image's n original captions (as in the manifest) + its altered
    captions."""
    captions = _captions(found)
    originals = _captions(manifest_entry)
    n = len(originals)
    n_altered = len(captions) - n
    if n_altered != n and n_altered != expected_altered(n):
        raise VlstressError(
            f"official set {path}: image {found['image']!r} has {len(captions)} captions, "
            f"expected its {n} original captions followed by {expected_altered(n)} altered ones "
            f"({n + expected_altered(n)} in all); the file is truncated or not an official "
            "RoCOCO set"
        )
    for k, (theirs, ours) in enumerate(zip(captions, originals)):
        if theirs.strip() != ours.strip():
            raise VlstressError(
                f"official set {path}: image {found['image']!r} caption {k} is {theirs!r} but "
                f"the manifest has {ours!r}; the set was made for other captions of this image"
            )
