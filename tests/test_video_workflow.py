"""The video suite end to end in both front ends (slow tier): stand-in frames named as in the real
ImageNet-Vid-Robust metadata (the first anchors and their neighbours), read by the
`imagenet-vid-robust` test-set kind as a zero-shot test set, a tiny CLIP, Snakemake in one fresh
copy and `dvc repro` in another. Checks what must hold whatever the weights: one record per
model with pm-0 .. pm-10 non-increasing in k, on exactly the stand-in anchors, the same numbers in
both front ends, the table and figure written, and nothing left to do afterwards."""

from __future__ import annotations

import json

import pytest
from test_video import stand_in

from conftest import committed_copy, finetune_off, run_ok, tool_env

pytestmark = pytest.mark.slow
pytest.importorskip("snakemake")
pytest.importorskip("dvc")


@pytest.fixture(scope="module")
def built(module_tmp) -> dict:
    frames, meta, chosen = stand_in(module_tmp.mktemp("vid"), n_anchors=2)
    env = tool_env(module_tmp.mktemp("model-configs"))

    def small(params: dict) -> dict:
        finetune_off(params)
        params["suites"] = {name: False for name in params["suites"]} | {
            "zeroshot": True,
            "video": True,
        }
        params["dataset"]["max_images"] = 3
        params["models"] = {"tiny": {"arch": "vlstress-tiny", "pretrained": None}}
        params["embed"].update(threads=1, workers=0)
        entry = dict(params["zeroshot"]["testsets"]["objects"])
        entry.update(kind="imagenet-vid-robust", root=str(frames), annotations=str(meta))
        entry.update(keep=None, drop=None)
        # the demo's ImageNet map names its `objects` set, which this replaces
        params["zeroshot"].update(testsets={"vid": entry}, templates="single", imagenet_maps=None)
        params["zeroshot"]["in_distribution"] = "vid"
        params["zeroshot"]["robustness"]["mce_baseline"] = None
        params["video"] = {"testsets": ["vid"], "k": 10}
        return params

    roots = {}
    for tool, cmd in (("snakemake", ("snakemake", "--cores", "2")), ("dvc", ("dvc", "repro"))):
        roots[tool] = committed_copy(module_tmp.mktemp(tool) / "repo", small)
        run_ok(*cmd, cwd=roots[tool], env=env)
    return {"roots": roots, "env": env, "anchors": sorted(chosen)}


def test_records_and_both_front_ends(built):
    found = {}
    for tool, root in built["roots"].items():
        (record,) = json.loads((root / "results/metrics/tiny/video.json").read_text())
        assert record["task"] == "video" and record["dataset"]["n_images"] == 2
        values = [record["metrics"][f"pm{k}"] for k in range(11)]
        assert all(later <= earlier for earlier, later in zip(values, values[1:])), values
        assert all(v in (0.0, 50.0, 100.0) for v in values)  # two anchors
        found[tool] = record["metrics"]
        manifest = json.loads((root / "data/testsets/vid/manifest.json").read_text())
        assert sorted(e["path"] for e in manifest["images"] if e["offset"] == 0) == built["anchors"]
        table = (root / "results/tables/video.md").read_text()
        assert "vid pm-0" in table and "vid pm-10" in table
        assert (root / "results/figures/video_pmk.png").stat().st_size > 10_000
        assert "Nothing to be done" in run_ok("snakemake", "-n", cwd=root, env=built["env"])
        assert "up to date" in run_ok("dvc", "status", cwd=root, env=built["env"])
    assert found["snakemake"] == found["dvc"]
