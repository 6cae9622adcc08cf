"""Concepts of nouns (WordNet hypernym groups) and the word pools replacements come from.

A noun's *sense* is a caption-domain override (`SENSE_OVERRIDES`, a dozen COCO nouns such as
"plate" -> the dish), else the first concrete one of its four most frequent WordNet noun
senses (lexicographer file person, animal, artifact, food, plant, body, object, location,
phenomenon, substance), else its most frequent sense ("table" -> the furniture, not the
tabular array; "racket" -> the racquet, not the noise). Its *concept* is the first entry of
`CONCEPTS` (ordered from specific to general) with an anchor synset among the sense's
hypernyms (the sense itself included); a noun under no anchor falls back to its
lexicographer file ("noun.artifact" -> "artifact"). Examples: man, child ->
person; table, couch -> furniture; dog, zebra -> animal; rain -> weather.

Adding a concept is one entry of `CONCEPTS`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

# concept -> anchor synsets; order matters: the first concept whose anchor is a hypernym wins
CONCEPTS: dict[str, tuple[str, ...]] = {
    "vehicle": ("vehicle.n.01", "conveyance.n.03", "craft.n.02"),
    "furniture": ("furniture.n.01",),
    "clothing": (
        "clothing.n.01",
        "headdress.n.01",
        "footwear.n.02",
        "accessory.n.01",
        "jewelry.n.01",
    ),
    "tableware": ("tableware.n.01", "kitchen_utensil.n.01", "cutlery.n.02", "crockery.n.01"),
    "container": ("container.n.01",),
    "sports_equipment": ("sports_equipment.n.01", "ball.n.01"),
    "device": (
        "device.n.01",
        "electronic_equipment.n.01",
        "machine.n.01",
        "instrument.n.01",
        "implement.n.01",
    ),
    "building": ("building.n.01", "room.n.01", "housing.n.01", "place_of_business.n.01"),
    "structure": ("structure.n.01", "way.n.06", "road.n.01"),
    "body_part": ("body_part.n.01",),
    "drink": ("beverage.n.01",),
    "food": ("food.n.01", "food.n.02", "foodstuff.n.02", "dish.n.02"),
    "plant": ("plant.n.02", "plant_part.n.01"),
    "animal": ("animal.n.01",),
    "person": ("person.n.01", "people.n.01"),
    "landscape": (
        "geological_formation.n.01",
        "body_of_water.n.01",
        "land.n.04",
        "land.n.02",
        "field.n.01",
    ),
    "place": ("geographic_area.n.01", "location.n.01"),
    "weather": ("atmospheric_phenomenon.n.01", "weather.n.01", "precipitation.n.03"),
    "material": ("material.n.01", "substance.n.01"),
    "time": ("time_period.n.01", "time_unit.n.01"),
}
# Caption-domain senses of COCO nouns whose most frequent concrete WordNet sense is not the one
# photos show (WordNet's order comes from 1990s text): word -> synset. One entry per word.
SENSE_OVERRIDES: dict[str, str] = {
    "bat": "bat.n.05",  # the club, not the animal
    "banana": "banana.n.02",  # the fruit, not the plant
    "cake": "cake.n.03",  # baked goods, not a block of soap
    "court": "court.n.04",  # a marked playing area (tennis court)
    "glass": "glass.n.02",  # a drinking glass, not the substance
    "hotdog": "hotdog.n.02",  # the sausage in a bun
    "kite": "kite.n.03",  # the plaything
    "microwave": "microwave.n.02",  # the oven
    "mouse": "mouse.n.04",  # the computer mouse (COCO category)
    "plant": "plant.n.02",  # the organism, not the factory
    "plate": "plate.n.04",  # the dish, not home plate
    "toaster": "toaster.n.02",  # the appliance
}
CONCRETE_LEXNAMES = frozenset(
    f"noun.{name}"
    for name in (
        "person animal artifact food plant body object location phenomenon substance"
    ).split()
)


@dataclass(frozen=True)
class NounInfo:
    lemma: str
    sense: str  # synset name, e.g. "table.n.02"
    concept: str


class ConceptIndex:
    """Concept lookups on one WordNet reader, cached per lemma."""

    def __init__(self, wn):
        self.wn = wn
        self._anchors = {name: frozenset(anchors) for name, anchors in CONCEPTS.items()}

    def _named_concept(self, synset) -> str | None:
        lineage = {
            s.name() for s in synset.closure(lambda s: s.hypernyms() + s.instance_hypernyms())
        } | {synset.name()}
        return next((name for name, anchors in self._anchors.items() if anchors & lineage), None)

    def sense(self, lemma: str):
        """The sense that stands for the noun: a caption-domain override (SENSE_OVERRIDES), else
        the first concrete one among its 4 most frequent senses, else the most frequent."""
        if lemma in SENSE_OVERRIDES:
            return self.wn.synset(SENSE_OVERRIDES[lemma])
        senses = self.wn.synsets(lemma, pos="n")
        if not senses:
            return None
        for synset in senses[:4]:
            if synset.lexname() in CONCRETE_LEXNAMES:
                return synset
        return senses[0]

    @functools.cache
    def info(self, lemma: str) -> NounInfo | None:
        synset = self.sense(lemma)
        if synset is None:
            return None
        concept = self._named_concept(synset) or synset.lexname().split(".")[1]
        return NounInfo(lemma=lemma, sense=synset.name(), concept=concept)

    def concept(self, lemma: str) -> str | None:
        info = self.info(lemma)
        return info.concept if info else None

    @functools.cache
    def related(self, lemma: str) -> frozenset[str]:
        """Synsets a replacement must avoid: all senses of `lemma`, hypernyms and hyponyms (3
        levels) of its sense."""
        senses = self.wn.synsets(lemma, pos="n")
        synset = self.sense(lemma)
        if synset is None:
            return frozenset()
        hypernyms = {
            s.name() for s in synset.closure(lambda s: s.hypernyms() + s.instance_hypernyms())
        }
        hyponyms = {
            s.name()
            for s in synset.closure(lambda s: s.hyponyms() + s.instance_hyponyms(), depth=3)
        }
        return frozenset({s.name() for s in senses} | hypernyms | hyponyms)

    def is_different(self, original: str, candidate: str) -> bool:
        """True when `candidate` names something else than `original` (no shared sense, not a
        hyper-/hyponym)."""
        if original == candidate:
            return False
        related = self.related(original)
        return not any(s.name() in related for s in self.wn.synsets(candidate, pos="n"))


def is_concrete(concept: str | None) -> bool:
    """A named concept or a concrete lexicographer file (replacements for diff-concept are
    concrete)."""
    return bool(concept) and (concept in CONCEPTS or f"noun.{concept}" in CONCRETE_LEXNAMES)


@functools.lru_cache(maxsize=1)
def _vocabulary_rows() -> tuple[tuple[str, str, str], ...]:
    text = resources.files("vlstress").joinpath("data/vocabulary.tsv").read_text(encoding="utf-8")
    rows = []
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            word, noun, concept = line.split("\t")
            rows.append((word, noun, concept))
    return tuple(rows)


def vocabulary() -> tuple[str, ...]:
    """The general English vocabulary shipped in vlstress/data/vocabulary.tsv (see its header)."""
    return tuple(row[0] for row in _vocabulary_rows())


def vocabulary_nouns() -> dict[str, str]:
    """Base form -> concept of the vocabulary's nouns (precomputed in vocabulary.tsv)."""
    return {noun: concept for _, noun, concept in _vocabulary_rows() if noun != "-"}


VOCABULARY_HEADER = """\
# General English vocabulary for the rand-voca set and the concept pools of vlstress.
# Made by `python -m vlstress.text.concepts` (build_vocabulary): the whole-word tokens of the
# CLIP BPE vocabulary (open_clip bpe_simple_vocab_16e6.txt.gz, MIT licence) in merge order
# (roughly by frequency), lower-case ASCII letters, 3-15 characters, not an English stop word
# (scikit-learn's list), used at least twice in WordNet 3.0's sense-tagged concordance (cntlist).
# Columns: word, its noun base form when it is a noun out of context ("-" if not), that noun's
# concept (concepts.CONCEPTS, else its WordNet lexicographer file). Regenerate after editing \
CONCEPTS.
"""


def build_vocabulary(
    bpe_path, word_classes, concepts: ConceptIndex, min_tagged: int = 2
) -> list[tuple[str, str, str]]:
    import gzip

    from vlstress.suites.rococo_text.nlp import stopwords

    with gzip.open(bpe_path, "rt", encoding="utf-8") as fh:
        lines = fh.read().split("\n")[1 : 49152 - 256 - 2 + 1]
    seen: set[str] = set()
    rows: list[tuple[str, str, str]] = []
    for line in lines:
        parts = line.split()
        if len(parts) != 2 or not parts[1].endswith("</w>"):
            continue
        word = parts[0] + parts[1][: -len("</w>")]
        if (
            word in seen
            or not (word.isascii() and word.isalpha() and word.islower())
            or not 3 <= len(word) <= 15
        ):
            continue
        if word in stopwords():
            continue
        counts = word_classes.pos_counts(word)
        if sum(c - 1 for c in counts.values() if c > 0) < min_tagged:
            continue
        seen.add(word)
        noun, concept = "-", "-"
        if word_classes.is_noun(word):
            noun = word_classes.lemma(word)
            concept = concepts.concept(noun) or "-"
        rows.append((word, noun, concept))
    return rows


def main() -> None:  # pragma: no cover - maintenance script
    import argparse
    import os

    import open_clip

    from vlstress.suites.rococo_text.nlp import DEFAULT_NLTK_DATA, word_classes

    parser = argparse.ArgumentParser(description="regenerate vlstress/data/vocabulary.tsv")
    parser.add_argument("--nltk-data", default=DEFAULT_NLTK_DATA)
    parser.add_argument(
        "--out", default=str(Path(__file__).resolve().parents[2] / "data" / "vocabulary.tsv")
    )
    args = parser.parse_args()
    wc = word_classes(args.nltk_data)
    bpe = os.path.join(os.path.dirname(open_clip.__file__), "bpe_simple_vocab_16e6.txt.gz")
    rows = build_vocabulary(bpe, wc, ConceptIndex(wc.wn))
    Path(args.out).write_text(
        VOCABULARY_HEADER + "".join("\t".join(r) + "\n" for r in rows), encoding="utf-8"
    )
    print(f"{len(rows)} words -> {args.out}")


if __name__ == "__main__":  # pragma: no cover
    main()
