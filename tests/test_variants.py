"""The four caption sets: position choice, replacement kinds, number, format, determinism, official
source."""

from __future__ import annotations

import json
import math
import re

import pytest

from vlstress.errors import VlstressError
from vlstress.suites.rococo_text import variants
from vlstress.suites.rococo_text.concepts import (
    CONCEPTS,
    ConceptIndex,
    vocabulary,
    vocabulary_nouns,
)
from vlstress.suites.rococo_text.stats import word_edit

from conftest import embed_set, run_cli

MANIFEST = {
    "dataset": "toy",
    "images": [
        {
            "image": "val2014/COCO_val2014_000000000042.jpg",
            "image_id": "42",
            "path": "x/42.jpg",
            "caption": [
                "A man riding a horse on the beach.",
                "Two dogs are playing with a ball in the grass",
            ],
        },
        {
            "image": "000000000007.jpg",
            "image_id": "7",
            "path": "x/7.jpg",
            "caption": [
                "A red car parked next to a tree.",
                "Some people sitting at a table with pizza.",
            ],
        },
    ],
}


def fake_ei(manifest) -> dict:
    """EI = 1 / (position + 1): the last word has the lowest EI."""
    from vlstress.suites.rococo_text.words import split_words, strip_punct

    captions = []
    for entry in manifest["images"]:
        for k, caption in enumerate(entry["caption"]):
            words = [
                {
                    "position": i,
                    "token": tok,
                    "word": strip_punct(tok),
                    "ei": round(1.0 / (i + 1), 6),
                }
                for i, tok in enumerate(split_words(caption))
                if strip_punct(tok)
            ]
            captions.append(
                {"image": entry["image"], "caption_index": k, "caption": caption, "words": words}
            )
    return {"captions": captions, "provenance": {}}


@pytest.fixture(scope="module")
def wc(nltk_data):
    from vlstress.suites.rococo_text.nlp import word_classes

    return word_classes(str(nltk_data))


@pytest.fixture(scope="module")
def concepts(wc):
    return ConceptIndex(wc.wn)


def make_ctx(wc, concepts, entries, words=None, pool="caption-first"):
    pools = variants.Pools(concepts, variants.caption_nouns(entries, wc), vocabulary_nouns(), pool)
    return variants.Context(
        word_classes=wc, concepts=concepts, pools=pools, vocabulary=list(vocabulary()), words=words
    )


@pytest.mark.parametrize(
    "words, concept",
    [
        (("man", "child", "woman"), "person"),
        (("table", "couch", "bed"), "furniture"),
        (("dog", "zebra", "horse"), "animal"),
        (("car", "bus", "bicycle"), "vehicle"),
    ],
)
def test_concepts_group_like_the_paper(concepts, words, concept):
    assert {concepts.concept(w) for w in words} == {concept}
    assert concept in CONCEPTS


def test_different_excludes_synonyms_hypernyms_hyponyms(concepts):
    assert not concepts.is_different("man", "man")
    assert not concepts.is_different("man", "person")  # hypernym
    assert not concepts.is_different("dog", "puppy")  # hyponym
    assert not concepts.is_different("couch", "sofa")  # synonym
    assert concepts.is_different("man", "woman")
    assert concepts.is_different("table", "rain")


def test_strategies():
    cands = [
        variants.Candidate(1, "man", 0.3),
        variants.Candidate(4, "horse", 0.1),
        variants.Candidate(7, "beach", math.nan),
    ]
    rng = variants.stable_rng("t")
    assert variants.STRATEGIES["lowest-ei"](cands, rng).word == "horse"
    assert variants.STRATEGIES["highest-ei"](cands, rng).word == "man"
    assert variants.STRATEGIES["first"](cands, rng).word == "man"
    picks = {
        variants.STRATEGIES["random"](cands, variants.stable_rng("s", i)).word for i in range(30)
    }
    assert picks == {"man", "horse", "beach"}
    assert variants.STRATEGIES["random"](cands, variants.stable_rng("s", 1)) == variants.STRATEGIES[
        "random"
    ](cands, variants.stable_rng("s", 1))


def test_candidates_are_nouns_with_fallback(wc):
    cands, level = variants.noun_candidates("A man riding a horse on the beach.", {}, wc)
    assert level == 0 and [c.word for c in cands] == ["man", "horse", "beach"]
    cands, level = variants.noun_candidates("it is very quickly", {}, wc)
    assert level == 1 and [c.word for c in cands] == ["quickly"]


def generate_all(wc, concepts, manifest=MANIFEST, strategy="lowest-ei"):
    entries = manifest["images"]
    ei = variants.load_ei_scores_data(fake_ei(manifest)) if strategy.endswith("-ei") else None
    positions = variants.choose_positions(entries, ei, wc, strategy, 0)
    out = {}
    for name, kind, words in [
        ("same_concept", "same-concept", None),
        ("diff_concept", "diff-concept", None),
        ("rand_voca", "rand-voca", None),
        ("danger", "danger", ["weapon", "criminal", "minefield"]),
    ]:
        ctx = make_ctx(wc, concepts, entries, words)
        out[name] = variants.generate_set(
            entries, positions, set_name=name, kind=kind, seed=3, ctx=ctx
        )
    return out


def test_four_sets_official_format_one_word_same_position(wc, concepts):
    sets = generate_all(wc, concepts)
    positions = {}
    for name, result in sets.items():
        assert [e["image"] for e in result.entries] == [e["image"] for e in MANIFEST["images"]]
        for entry, source in zip(result.entries, MANIFEST["images"]):
            n = len(source["caption"])
            assert len(entry["caption"]) == 2 * n and entry["caption"][:n] == source["caption"]
            for k, (o, a) in enumerate(zip(entry["caption"][:n], entry["caption"][n:])):
                one, index, old, new, _ = word_edit(o, a)
                assert one, (name, o, a)
                positions.setdefault((entry["image"], k), set()).add(index)
                image_words = {w.lower().strip(".") for c in source["caption"] for w in c.split()}
                assert new not in image_words
        assert result.counts["captions"] == 4
    assert all(len(p) == 1 for p in positions.values()), "the four sets replace the same word"
    # lowest EI = last noun of each caption under the fake EI
    records = {(r["image"], r["caption_index"]): r["original"] for r in sets["danger"].records}
    assert records[("val2014/COCO_val2014_000000000042.jpg", 0)] == "beach"
    assert records[("000000000007.jpg", 1)] == "pizza"


def test_kinds_respect_concepts_number_and_lists(wc, concepts):
    sets = generate_all(wc, concepts)
    for r in sets["same_concept"].records:
        assert r["concept_original"] == r["concept_replacement"], r
    for r in sets["diff_concept"].records:
        assert r["concept_original"] != r["concept_replacement"], r
    for r in sets["danger"].records:
        assert wc.lemma(r["replacement"]) in {"weapon", "criminal", "minefield"}
    # "Two dogs ... in the grass": grass (lowest EI) is singular; "people" would stay plural
    for name in ("same_concept", "diff_concept", "danger"):
        for r in sets[name].records:
            if wc.is_plural(r["original"]):
                assert wc.is_plural(r["replacement"]), (name, r)


def test_plural_stays_plural(wc, concepts):
    manifest = {
        "dataset": "toy",
        "images": [
            {"image": "1.jpg", "caption": ["Two dogs"]},
            {"image": "2.jpg", "caption": ["three cats"]},
        ],
    }
    sets = generate_all(wc, concepts, manifest, strategy="first")
    for name, result in sets.items():
        for r in result.records:
            assert r["original"] in {"dogs", "cats"}
            if name != "rand_voca":
                assert wc.is_plural(r["replacement"]) and r["replacement"].endswith("s"), (name, r)


def test_deterministic_and_seeded(wc, concepts):
    a = generate_all(wc, concepts)
    b = generate_all(wc, concepts)
    assert {k: v.entries for k, v in a.items()} == {k: v.entries for k, v in b.items()}
    entries = MANIFEST["images"]
    positions = variants.choose_positions(entries, None, wc, "first", 0)
    ctx = make_ctx(wc, concepts, entries)
    outs = {
        json.dumps(
            variants.generate_set(
                entries, positions, set_name="rand_voca", kind="rand-voca", seed=s, ctx=ctx
            ).entries
        )
        for s in range(5)
    }
    assert len(outs) > 1, "the seed changes the replacements"


def test_missing_ei_and_bad_names(wc, concepts):
    entries = MANIFEST["images"]
    with pytest.raises(VlstressError, match="EI scores lack caption 0 of image"):
        variants.choose_positions(entries, {}, wc, "lowest-ei", 0)
    with pytest.raises(VlstressError, match="unknown strategy"):
        variants.choose_positions(entries, None, wc, "smallest", 0)
    positions = variants.choose_positions(entries, None, wc, "first", 0)
    with pytest.raises(VlstressError, match="kind danger needs a word list"):
        variants.generate_set(
            entries,
            positions,
            set_name="danger",
            kind="danger",
            seed=0,
            ctx=make_ctx(wc, concepts, entries),
        )
    with pytest.raises(VlstressError, match="unknown kind"):
        variants.generate_set(
            entries,
            positions,
            set_name="x",
            kind="synonym",
            seed=0,
            ctx=make_ctx(wc, concepts, entries),
        )


def test_official_matching_by_coco_id(tmp_path):
    def altered(entry):
        return [*entry["caption"], *(c.replace(" ", " x ", 1) for c in entry["caption"])]

    by_id = {e["image_id"]: e for e in MANIFEST["images"]}
    official = [
        {"image": "val2014/COCO_val2014_000000000007.jpg", "caption": altered(by_id["7"])},
        {"image": "val2014/COCO_val2014_000000000099.jpg", "caption": ["x y", "x z"]},
        {"image": "val2014/COCO_val2014_000000000042.jpg", "caption": altered(by_id["42"])},
    ]
    path = tmp_path / "same_concept.json"
    path.write_text(json.dumps(official))
    entries, n = variants.load_official(path, MANIFEST["images"])
    assert n == 2
    assert entries == [
        {"image": "val2014/COCO_val2014_000000000042.jpg", "caption": altered(by_id["42"])},
        {"image": "000000000007.jpg", "caption": altered(by_id["7"])},
    ]
    assert variants.official_path(None, tmp_path / "raw", "same_concept") is None
    (tmp_path / "raw" / "rococo").mkdir(parents=True)
    (tmp_path / "raw" / "rococo" / "danger.json").write_text("[]")
    assert (
        variants.official_path(tmp_path, tmp_path / "raw", "danger")
        == tmp_path / "raw" / "rococo" / "danger.json"
    )
    assert variants.official_path(tmp_path, tmp_path / "raw", "same_concept") == path


def cli(*argv: str) -> int:
    """In-process CLI (WordNet stays loaded): exit status as `vlstress` returns it."""
    from vlstress.cli import main

    return main(list(argv))


def test_command_generated_and_official(tmp_path, nltk_data, wc, capsys):
    (tmp_path / "manifest.json").write_text(json.dumps(MANIFEST))
    (tmp_path / "ei.json").write_text(json.dumps(fake_ei(MANIFEST)))
    common = [
        "--manifest",
        str(tmp_path / "manifest.json"),
        "--ei-scores",
        str(tmp_path / "ei.json"),
        "--nltk-data",
        str(nltk_data),
    ]
    out_path = tmp_path / "tv" / "diff_concept.json"
    assert (
        cli(
            "text-variants",
            *common,
            "--set",
            "diff_concept",
            "--seed",
            "1",
            "--words",
            "None",
            "--out",
            str(out_path),
        )
        == 0
    )
    out = json.loads(out_path.read_text())
    meta = json.loads((tmp_path / "tv" / "diff_concept.json.json").read_text())
    assert len(out) == 2 and len(out[0]["caption"]) == 4
    assert (
        meta["provenance"]["params"]["kind"] == "diff-concept"
        and meta["provenance"]["params"]["strategy"] == "lowest-ei"
    )
    assert len(meta["records"]) == 4 and meta["counts"]["captions"] == 4
    first = out_path.read_bytes()
    assert (
        cli(
            "text-variants", *common, "--set", "diff_concept", "--seed", "1", "--out", str(out_path)
        )
        == 0
    )
    assert out_path.read_bytes() == first, "byte-identical rerun"

    # official source: missing file -> clear error, no output
    official = [
        "--source",
        "official",
        "--set",
        "danger",
        "--out",
        str(tmp_path / "o" / "danger.json"),
    ]
    assert cli("text-variants", *common, *official, "--official-dir", str(tmp_path / "none")) == 2
    assert "danger.json not found" in capsys.readouterr().err and not (tmp_path / "o").exists()
    (tmp_path / "off").mkdir()
    originals = MANIFEST["images"][0]["caption"]
    released = [
        *originals,
        "A criminal riding a horse on the beach.",
        "Two weapons are playing with a ball in the grass",
    ]
    (tmp_path / "off" / "danger.json").write_text(
        json.dumps([{"image": "val2014/COCO_val2014_000000000042.jpg", "caption": released}])
    )
    assert cli("text-variants", *common, *official, "--official-dir", str(tmp_path / "off")) == 0
    assert json.loads((tmp_path / "o" / "danger.json").read_text()) == [
        {"image": "val2014/COCO_val2014_000000000042.jpg", "caption": released}
    ]


@pytest.mark.slow
def test_cli_subprocess_runs(tmp_path, nltk_data):
    """One real `vlstress text-variants` process (entry point, imports, exit code)."""
    (tmp_path / "manifest.json").write_text(json.dumps(MANIFEST))
    run_cli(
        "text-variants",
        "--manifest",
        str(tmp_path / "manifest.json"),
        "--set",
        "danger",
        "--words",
        "weapon,criminal",
        "--strategy",
        "first",
        "--nltk-data",
        str(nltk_data),
        "--out",
        str(tmp_path / "danger.json"),
    )
    out = json.loads((tmp_path / "danger.json").read_text())
    assert all(
        any(w in c.lower() for w in ("weapon", "criminal"))
        for e in out
        for c in e["caption"][len(e["caption"]) // 2 :]
    )


def test_coco_mini_karpathy_images_against_official(shared_data, wc, concepts):
    """The 22 coco-mini images of the Karpathy test split: generated sets beside the official
    ones."""
    from vlstress.suites.rococo_text import stats

    captions = json.loads(
        (shared_data / "coco-mini" / "annotations" / "captions_val2017.json").read_text()
    )
    test_ids = {
        22192,
        22892,
        99053,
        105912,
        153797,
        172648,
        177861,
        241668,
        252639,
        253695,
        255165,
        262440,
        290843,
        361919,
        369771,
        439180,
        453302,
        458045,
        519208,
        519611,
        536038,
        540280,
    }
    by_id: dict[int, list[str]] = {}
    for ann in sorted(captions["annotations"], key=lambda a: a["id"]):
        by_id.setdefault(ann["image_id"], []).append(ann["caption"])
    entries = [
        {"image": f"{i:012d}.jpg", "image_id": str(i), "path": "", "caption": by_id[i][:5]}
        for i in sorted(test_ids)
        if i in by_id
    ]
    assert len(entries) >= 10
    positions = variants.choose_positions(entries, None, wc, "first", 0)
    for name, kind, words in [
        ("same_concept", "same-concept", None),
        ("danger", "danger", ["weapon", "criminal", "minefield"]),
    ]:
        generated = variants.generate_set(
            entries,
            positions,
            set_name=name,
            kind=kind,
            seed=0,
            ctx=make_ctx(wc, concepts, entries, words),
        ).entries
        official, n = variants.load_official(shared_data / "rococo" / f"{name}.json", entries)
        assert n == len(entries)
        ours, theirs = stats.set_stats(generated, wc), stats.set_stats(official, wc)
        assert ours["one_word_pct"] == 100.0
        assert ours["pos_pct"]["noun"] >= 95.0
        assert theirs["n_altered"] >= 5 * len(entries) and theirs["one_word_pct"] > 50.0


def test_set_originals_embed_like_the_manifest(tmp_path):
    """Originals inside a set get the embeddings they get in the manifest (up to batching)."""
    import numpy as np

    manifest = {
        "dataset": "toy",
        "images": [
            {"image": e["image"], "path": "", "caption": e["caption"]} for e in MANIFEST["images"]
        ],
    }
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    tset = [
        {
            "image": e["image"],
            "caption": e["caption"] + [c.replace("a", "the", 1) for c in e["caption"]],
        }
        for e in manifest["images"]
    ]
    (tmp_path / "set.json").write_text(json.dumps(tset))
    model = [
        "--model",
        "tiny",
        "--arch",
        "ViT-S-32-alt",
        "--pretrained",
        "None",
        "--seed",
        "3",
        "--device",
        "cpu",
        "--batch-size",
        "4",
    ]
    embed_set("captions", str(tmp_path / "manifest.json"), [*model], str(tmp_path / "texts.npy"))
    embed_set("captions", str(tmp_path / "set.json"), [*model], str(tmp_path / "text_set.npy"))
    ref, var = np.load(tmp_path / "texts.npy"), np.load(tmp_path / "text_set.npy")
    meta = json.loads((tmp_path / "text_set.npy.json").read_text())
    assert var.shape == (8, ref.shape[1]) and meta["captions_per_image"] == [4, 4]
    assert (
        meta["provenance"]["model"]["slug"] == "tiny" and meta["provenance"]["model"]["seed"] == 3
    )
    np.testing.assert_allclose(var[[0, 1, 4, 5]], ref, atol=1e-5)


@pytest.mark.parametrize(
    ("captions", "message"),
    [
        (
            lambda e: [*e["caption"], e["caption"][0] + " x"],
            "has 3 captions, expected its 2 original captions followed by 2",
        ),
        (lambda e: [*e["caption"], *e["caption"], "one more"], "has 5 captions"),
        (
            lambda e: ["something else", *e["caption"][1:], *e["caption"]],
            "caption 0 is 'something else'",
        ),
    ],
)
def test_official_sets_are_checked_on_entry(tmp_path, captions, message):
    entry = next(e for e in MANIFEST["images"] if e["image_id"] == "42")
    path = tmp_path / "same_concept.json"
    path.write_text(
        json.dumps([{"image": "val2014/COCO_val2014_000000000042.jpg", "caption": captions(entry)}])
    )
    with pytest.raises(VlstressError, match=re.escape(message)) as error:
        variants.load_official(path, MANIFEST["images"])
    assert "COCO_val2014_000000000042.jpg" in str(error.value)


def test_the_official_six_plus_five_exception_is_accepted_and_counted(tmp_path):
    six = [f"caption number {k}" for k in range(6)]
    manifest = [{"image": "000000000042.jpg", "image_id": "42", "path": "x", "caption": six}]
    official = [
        {
            "image": "val2014/COCO_val2014_000000000042.jpg",
            "caption": [*six, *(c + " x" for c in six[:5])],
        }
    ]
    path = tmp_path / "danger.json"
    path.write_text(json.dumps(official))
    entries, n = variants.load_official(path, manifest)
    assert n == 1 and variants.fewer_altered(entries, manifest) == 1
