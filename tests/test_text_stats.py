"""Set statistics: word edits, parts of speech, counts, cosine; the command's table and figure."""

from __future__ import annotations

import json

import numpy as np
import pytest

from vlstress.suites.rococo_text import stats


def test_word_edit_ignores_case_and_punctuation():
    one, index, old, new, _ = stats.word_edit("A man riding a horse.", "a child riding a horse")
    assert (one, index, old, new) == (True, 1, "man", "child")
    # the official danger files re-tokenise punctuation: "road ." is still one edit
    assert stats.word_edit("A man on a road.", "A man on a minefield .")[:4] == (
        True,
        4,
        "road",
        "minefield",
    )
    assert stats.word_edit("A man on a road.", "A dog on a hill.")[0] is False  # two words
    assert stats.word_edit("A man on a road.", "A man on road.")[0] is False  # a deletion
    assert stats.word_edit("A man.", "a man")[:4] == (False, None, None, None)  # unchanged


@pytest.fixture(scope="module")
def wc(nltk_data):
    from vlstress.suites.rococo_text.nlp import word_classes

    return word_classes(str(nltk_data))


ENTRIES = [
    {
        "image": "1.jpg",
        "caption": [
            "A man riding a horse.",
            "A dog on the beach.",
            "a child riding a horse",
            "A dog on the minefield.",
        ],
    },
    {
        "image": "2.jpg",
        "caption": ["A red car.", "Two cats sleeping.", "A blue car.", "Two cats weapon."],
    },
]


def test_set_stats_known_answers(wc):
    cosine = lambda a, b: np.array([0.5, 0.7, 0.9, 0.1])  # noqa: E731
    s = stats.set_stats(ENTRIES, wc, cosine)
    assert s["n_images"] == 2 and s["n_altered"] == 4
    assert s["one_word_pct"] == 100.0
    assert s["pos_pct"]["noun"] == 50.0  # man, beach
    assert s["pos_pct"]["adj"] == 25.0  # red
    assert s["pos_pct"]["verb"] == 25.0  # sleeping
    assert s["distinct_replacements"] == 4 and s["distinct_replaced"] == 4
    assert s["top_replaced"][0] == ["beach", 1]
    assert s["mean_cosine"] == pytest.approx(0.55)
    rows = stats.table_rows({"danger": {"generated": s, "official": s}})
    assert [r["source"] for r in rows] == ["generated", "official"] and rows[0][
        "one_word_%"
    ] == 100.0


@pytest.mark.slow
def test_command_table_figure_and_official_beside(tmp_path, nltk_data):
    from conftest import run_cli

    manifest = {
        "dataset": "toy",
        "images": [
            {
                "image": "val2014/COCO_val2014_000000000001.jpg",
                "image_id": "1",
                "path": "",
                "caption": ["A man riding a horse.", "A dog on the beach."],
            },
            {
                "image": "val2014/COCO_val2014_000000000002.jpg",
                "image_id": "2",
                "path": "",
                "caption": ["A red car.", "Two cats sleeping."],
            },
        ],
    }
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    (tmp_path / "tv").mkdir()
    generated = [
        {"image": e["image"], "caption": e["caption"] + altered}
        for e, altered in zip(
            manifest["images"],
            [
                ["A child riding a horse.", "A dog on the rain."],
                ["A red bus.", "Two weapons sleeping."],
            ],
        )
    ]
    (tmp_path / "tv" / "danger.json").write_text(json.dumps(generated))
    (tmp_path / "tv" / "danger.json.json").write_text("{}")  # a sidecar is not a set
    (tmp_path / "official").mkdir()
    (tmp_path / "official" / "danger.json").write_text(
        json.dumps(
            [
                {
                    "image": "val2014/COCO_val2014_000000000002.jpg",
                    "caption": [
                        "A red car.",
                        "Two cats sleeping.",
                        "A criminal car .",
                        "Two criminals sleeping.",
                    ],
                }
            ]
        )
    )
    out = tmp_path / "out"
    run_cli(
        "text-stats",
        "--manifest",
        str(tmp_path / "manifest.json"),
        "--variants-dir",
        str(tmp_path / "tv"),
        "--official-dir",
        str(tmp_path / "official"),
        "--raw",
        "None",
        "--nltk-data",
        str(nltk_data),
        "--model",
        "scorer",
        "--arch",
        "ViT-S-32-alt",
        "--pretrained",
        "None",
        "--seed",
        "0",
        "--device",
        "cpu",
        "--batch-size",
        "8",
        "--out",
        str(out / "stats.json"),
        "--out-csv",
        str(out / "stats.csv"),
        "--out-md",
        str(out / "stats.md"),
        "--out-fig",
        str(out / "fig.png"),
    )
    data = json.loads((out / "stats.json").read_text())
    assert set(data["sets"]) == {"danger"} and set(data["sets"]["danger"]) == {
        "generated",
        "official",
    }
    gen, off = data["sets"]["danger"]["generated"], data["sets"]["danger"]["official"]
    assert (
        gen["n_altered"] == 4
        and gen["one_word_pct"] == 100.0
        and off["n_images"] == 1
        and off["n_altered"] == 2
    )
    assert -1.0 <= gen["mean_cosine"] <= 1.0
    assert data["provenance"]["model"]["arch"] == "ViT-S-32-alt"
    assert (out / "stats.csv").read_text().startswith("set,source,")
    assert "| danger" in (out / "stats.md").read_text()
    assert (out / "fig.png").stat().st_size > 1000 and (out / "fig.pdf").stat().st_size > 1000
