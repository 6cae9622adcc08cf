"""The text half of the workflow on real data: the 22 Karpathy-test photos of
../shared/data/coco-mini with the official RoCOCO sets (`text_variants.source:
official`), fully offline (slow: a few minutes; skips without the shared data)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import copy_repo, finetune_off, zeroshot_off

pytestmark = pytest.mark.slow
pytest.importorskip("snakemake")
ENV = {
    **os.environ,
    "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
}
SETS = ("same_concept", "diff_concept", "rand_voca", "danger")
MODEL = "vit-s-32-random"


@pytest.fixture(scope="module")
def run(module_tmp, shared_data) -> Path:
    root = copy_repo(module_tmp.mktemp("coco-mini") / "repo")
    recipe = yaml.safe_load((root / "params.coco-mini.yaml").read_text())["dataset"]
    for key in (
        "images",
        "karpathy_url",
        "rococo_url",
    ):  # the recipe's paths are relative to the checkout
        recipe[key] = str(
            (shared_data.parent / Path(recipe[key]).relative_to("../shared")).resolve()
        )
    params = yaml.safe_load((root / "params.yaml").read_text())
    params["dataset"] = recipe
    params["models"] = {MODEL: {"arch": "ViT-S-32", "pretrained": None}}
    finetune_off(params)
    zeroshot_off(params)  # not what this test is about
    params["text_variants"]["source"] = "official"
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    targets = [f"results/metrics/{MODEL}/text-{name}.json" for name in SETS] + [
        "results/text/stats.json"
    ]
    result = subprocess.run(
        ["snakemake", "--cores", "2", *targets], cwd=root, env=ENV, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-5000:]
    return root


def test_official_sets_are_used_unchanged(run, shared_data):
    manifest = json.loads((run / "data/prepared/manifest.json").read_text())
    names = [entry["image"] for entry in manifest["images"]]
    assert len(names) == 22
    for name in SETS:
        official = {
            e["image"]: e["caption"]
            for e in json.loads((shared_data / "rococo" / f"{name}.json").read_text())
        }
        ours = json.loads((run / f"data/text_variants/{name}.json").read_text())
        assert [entry["image"] for entry in ours] == names
        assert all(entry["caption"] == official[entry["image"]] for entry in ours)


def test_text_metrics_on_real_captions(run):
    for name in SETS:
        record = json.loads((run / f"results/metrics/{MODEL}/text-{name}.json").read_text())
        assert record["task"] == "text-stress" and record["condition"] == {"set": name}
        assert record["dataset"]["n_images"] == 22
        metrics = record["metrics"]
        assert 0 <= metrics["i2t_false_R@1"] <= 100
        assert metrics["i2t_R@1"] <= metrics["i2t_R@5"] <= metrics["i2t_R@10"]
        # adding distractors to the gallery can only push ground truths down
        assert metrics["i2t_R@1"] <= metrics["i2t_R@1_original"]


def test_stats_describe_the_official_sets(run):
    stats = json.loads((run / "results/text/stats.json").read_text())["sets"]
    assert set(stats) == set(SETS)
    for name in SETS:
        official = stats[name]["official"]
        # the released sets mostly change one word (lower-casing and punctuation are not edits)
        assert 80 <= official["one_word_pct"] <= 100
        assert 0 < official["mean_cosine"] < 1
