"""An external input of one item of a mapping (a test set's local folder, a model's local
checkpoint) is a dependency of that item only, in both front ends (editing one set's images
rebuilt all sets under DVC, whose `foreach` body is the same for every item)."""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from vlstress import params as params_module
from vlstress.pipeline import dvc
from vlstress.pipeline.snakemake import _external_inputs
from vlstress.suites.zeroshot.suite import SUITE as ZEROSHOT

# the venv's dvc, whether or not its bin folder is on PATH (`make test` puts it there)
ENV = {
    **os.environ,
    "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
}

REPO = Path(__file__).resolve().parents[1]


def _testset_stage():
    return next(stage for stage in ZEROSHOT.stages if stage.name == "testset")


@pytest.fixture
def two_folders(tmp_path, monkeypatch):
    """params.yaml's demo set plus two `imagefolder` sets, each with its own folder."""
    monkeypatch.chdir(tmp_path)
    params = params_module.load([REPO / "params.yaml"])
    demo = params["zeroshot"]["testsets"]["objects"]
    for name in ("left", "right"):
        (tmp_path / name / "cat").mkdir(parents=True)
        params["zeroshot"]["testsets"][name] = {
            **copy.deepcopy(demo),
            "kind": "imagefolder",
            "root": str(tmp_path / name),
            "keep": None,
        }
    return params, tmp_path


def test_each_set_depends_on_its_own_folder_only_in_dvc_yaml(two_folders):
    params, root = two_folders
    stages = yaml.safe_load(dvc.render(params))["stages"]
    left, right = (stages[f"testset-{k}"] for k in ("left", "right"))
    # the set without a folder of its own keeps its `foreach` item (its name does not depend on
    # the other sets), and its body depends on no set's folder
    assert list(stages["testset"]["foreach"]) == ["objects"] and "testset-objects" not in stages
    objects = stages["testset"]["do"]
    assert str(root / "left") in left["deps"] and str(root / "right") not in left["deps"]
    assert str(root / "right") in right["deps"] and str(root / "left") not in right["deps"]
    assert not {str(root / "left"), str(root / "right")} & set(objects["deps"])
    # the item's fields written out, the item a params dependency: an edit of a field reruns it
    assert "--kind imagefolder" in left["cmd"] and "${item." not in left["cmd"]
    assert left["params"] == ["zeroshot.testsets.left"]
    assert left["outs"] == ["data/testsets/left"]
    addresses = dict(dvc.addresses(params))
    assert addresses["testset-left"] == ["data/testsets/left"]


def test_items_with_the_same_inputs_keep_one_foreach_stage(two_folders):
    params, _ = two_folders
    for name in ("left", "right"):
        del params["zeroshot"]["testsets"][name]
    stages = yaml.safe_load(dvc.render(params))["stages"]
    assert list(stages["testset"]["foreach"]) == ["objects"]  # the items, written out
    assert stages["testset"]["do"]["params"] == ["zeroshot.testsets.${key}"]
    assert not [name for name in stages if name.startswith("testset-")]


def test_snakemake_gives_each_set_its_own_folder(two_folders):
    params, root = two_folders
    found = _external_inputs(_testset_stage(), params)
    assert found({"testset": "left"}) == [str(root / "left")]
    assert found({"testset": "objects"}) == []


def test_dvc_reads_the_per_item_stages(two_folders):
    """DVC parses the rendered file and interpolates each item's params."""
    params, root = two_folders
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    (root / "dvc.yaml").write_text(dvc.render(params))
    subprocess.run(["git", "init", "-q"], cwd=root, check=True, env=ENV)
    subprocess.run(["dvc", "init", "-q"], cwd=root, check=True, env=ENV)
    listed = subprocess.run(
        ["dvc", "stage", "list", "--all"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
        env=ENV,
    ).stdout
    assert "testset-left" in listed and "testset-right" in listed
    # the names DVC gives the stages are those the lock pruning and Snakemake's commit use
    assert {line.split()[0] for line in listed.splitlines() if line.strip()} == {
        name for name, _ in dvc.addresses(params)
    }
    # an item removed from params.yaml: DVC still parses the file (the gate then says to render)
    del params["zeroshot"]["testsets"]["right"]
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    subprocess.run(
        ["dvc", "stage", "list", "--all"], cwd=root, capture_output=True, check=True, env=ENV
    )
    shown = subprocess.run(
        ["dvc", "status", "testset-left"], cwd=root, capture_output=True, text=True, env=ENV
    )
    assert "left" in shown.stdout + shown.stderr and "right" not in shown.stdout
