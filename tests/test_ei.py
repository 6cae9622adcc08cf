"""Embedding influence: EI(w, c) = 1 - cos(f(c), f(c without w))."""

from __future__ import annotations

import json
import math
from functools import partial

import numpy as np

from vlstress.suites.rococo_text.ei import (
    CaptionRef,
    captions_of,
    deletion_variants,
    ei_scores,
    load_ei_scores,
)


def bag_of_words(texts):
    """A toy encoder: normalised word counts (punctuation and case ignored)."""
    from vlstress.suites.rococo_text.words import split_words, strip_punct

    vocab = sorted({strip_punct(t) for text in texts for t in split_words(text)} - {""})
    rows = np.zeros((len(texts), len(vocab) + 1))
    for i, text in enumerate(texts):
        for token in split_words(text):
            if strip_punct(token):
                rows[i, vocab.index(strip_punct(token))] += 1
        rows[i, -1] = 1e-12 if not rows[i].any() else 0
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_deletion_variants_skip_punctuation():
    assert deletion_variants("A dog , runs.") == [
        (0, "A", "a", "dog , runs."),
        (1, "dog", "dog", "A , runs."),
        (3, "runs.", "runs", "A dog ,."),
    ]
    assert deletion_variants(" . ") == []


def test_known_answer_bag_of_words():
    refs = [
        CaptionRef("x.jpg", 0, "a dog runs."),
        CaptionRef("x.jpg", 1, "dog dog cat"),
        CaptionRef("y.jpg", 0, "!"),
    ]
    expected_abc = round(1 - 2 / math.sqrt(6), 6)  # [1,1,1] vs [1,1,0]
    for block in (1, 2, 10):
        records = ei_scores(refs, bag_of_words, block_size=block)
        assert [(r["image"], r["caption_index"]) for r in records] == [
            ("x.jpg", 0),
            ("x.jpg", 1),
            ("y.jpg", 0),
        ]
        assert [w["ei"] for w in records[0]["words"]] == [expected_abc] * 3
        assert records[0]["words"][2] == {
            "position": 2,
            "token": "runs.",
            "word": "runs",
            "ei": expected_abc,
        }
        # "dog dog cat" = [2, 1]: without a "dog" -> [1, 1] (cos 3/sqrt(10));
        # without "cat" -> [2, 0] (cos 2/sqrt(5))
        assert [w["ei"] for w in records[1]["words"]] == [round(1 - 3 / math.sqrt(10), 6)] * 2 + [
            round(1 - 2 / math.sqrt(5), 6)
        ]
        assert records[2]["words"] == []


def test_captions_of_manifest_entries():
    entries = [{"image": "a", "caption": ["one", "two"]}, {"image": "b", "caption": "three"}]
    assert captions_of(entries) == [
        CaptionRef("a", 0, "one"),
        CaptionRef("a", 1, "two"),
        CaptionRef("b", 0, "three"),
    ]


def test_ei_with_a_real_encoder_matches_plain_encode_text(tiny_arch):
    import open_clip
    import torch

    from vlstress.embedding.encoders import encode_texts

    torch.manual_seed(0)
    model = open_clip.create_model(tiny_arch, pretrained=None).eval()
    tokenizer = open_clip.get_tokenizer(tiny_arch)
    caption = "A man riding a wave on top of a surfboard."
    records = ei_scores(
        [CaptionRef("i", 0, caption)],
        partial(encode_texts, model, tokenizer, batch_size=4, device="cpu", progress=False),
    )
    texts = [caption] + [v[3] for v in deletion_variants(caption)]
    with torch.no_grad():
        ref = (
            torch.nn.functional.normalize(model.encode_text(tokenizer(texts)), dim=-1)
            .double()
            .numpy()
        )
    expected = 1 - ref[1:] @ ref[0]
    got = np.array([w["ei"] for w in records[0]["words"]])
    assert len(got) == 10 and np.abs(got - expected).max() < 2e-6


def test_command(tiny_arch, tmp_path):
    from vlstress.cli import main

    manifest = {
        "dataset": "toy",
        "images": [
            {"image": "b.jpg", "path": "b.jpg", "caption": ["Two cats on a sofa.", "a cat"]},
            {
                "image": "a.jpg",
                "path": "a.jpg",
                "caption": ["A dog runs on the beach .", "dog", "a red dog"],
            },
        ],
    }
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    out = tmp_path / "results" / "text" / "ei_scores.json"
    argv = [
        "ei-scores",
        "--manifest",
        str(tmp_path / "manifest.json"),
        "--model",
        "tiny",
        "--arch",
        tiny_arch,
        "--pretrained",
        "None",
        "--seed",
        "1",
        "--device",
        "cpu",
        "--batch-size",
        "8",
        "--block-size",
        "2",
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    data = json.loads(out.read_text())
    assert (
        data["model"] == "tiny"
        and data["weights"] == "random-init (seed 1)"
        and data["dataset"] == "toy"
    )
    assert (
        data["n_images"] == 2 and data["n_captions"] == 5 and data["n_words"] == 5 + 2 + 6 + 1 + 3
    )
    assert (
        data["provenance"]["step"] == "ei-scores"
        and data["provenance"]["params"]["block_size"] == 2
    )
    records = load_ei_scores(out)
    assert [(r["image"], r["caption_index"]) for r in records] == [
        ("b.jpg", 0),
        ("b.jpg", 1),
        ("a.jpg", 0),
        ("a.jpg", 1),
        ("a.jpg", 2),
    ]
    # the lone "." is skipped
    assert [w["position"] for w in records[2]["words"]] == [
        0,
        1,
        2,
        3,
        4,
        5,
    ]
    assert all(
        isinstance(w["ei"], float) and -1e-6 <= w["ei"] <= 2 for r in records for w in r["words"]
    )
    # a one-word caption: deleting its only word gives "" (still a valid text)
    assert records[3]["words"][0]["word"] == "dog"
    first = out.read_bytes()
    assert main(argv) == 0 and out.read_bytes() == first  # deterministic bytes
